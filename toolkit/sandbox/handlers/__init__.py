"""Operation handlers of the sandbox, one module per resource.

Each handler takes a :class:`~toolkit.sandbox.handlers.common.Ctx` and returns the JSON body
of the answer; failures are raised as :mod:`toolkit.sandbox.errors` exceptions.
"""
