"""The toolkit's exceptions: one tree with a single root.

::

    ToolkitError
    ├── ConfigError          no usable key or base URL, a bad config file
    ├── ValidationError      a value the spec knows is wrong; raised before anything is sent
    ├── TransportError       no answer: connection refused, timeout (``maybe_sent``)
    │   └── MalformedAnswerError  an answer that does not read: a body cut or not JSON,
    │                        JSON of the wrong shape (``expected``, ``got``)
    ├── ApiError             the service answered with an error (operation, http_status,
    │   │                    error_list, ``maybe_sent``)
    │   ├── AuthError        missing or unknown api-key (HTTP 401)
    │   ├── NotFoundError    a campaign, creative or path the account does not have
    │   └── RateLimitError   HTTP 429 after the retries (``retry_after`` seconds)
    ├── IncompleteReadError  a part of the live account could not be read, so no plan
    ├── PlanRefused          a guard refused a plan before any call (``guard``, ``details``)
    ├── AccountMismatchError a workbook exported from another account than the key's
    │   └── PlanAccountError a plan made on another account (or service) than the client's
    ├── SnapshotError        a saved account snapshot that cannot be read
    ├── CliError             a mistake on the command line (not a workbook, unknown campaign)
    ├── StatsError           a tracker export that does not read: every problem
    │                        (``StatsProblem``) with its line, column and value
    ├── StatsNote            a warning (also a ``UserWarning``), not raised: the rows a
    │                        statistics read left out (a tracker's totals row)
    ├── RulesError           rules that do not validate: every problem (``RuleProblem``)
    │                        with its rule and field
    └── WorkbookError        an edited workbook that does not validate: every problem
                             (``WorkbookProblem``) with its sheet, row, column and value

No message of these exceptions ever contains the api-key.

>>> try:
...     raise NotFoundError("campaign.item", 200, ["Campaign not found #7"])
... except ApiError as exc:
...     print(exc)
campaign.item: Campaign not found #7
"""

from __future__ import annotations

from typing import Any, NamedTuple


class ToolkitError(Exception):
    """Root of every error the toolkit raises."""


class ConfigError(ToolkitError):
    """The client cannot be configured (no base URL for a key, a malformed config file)."""


class ValidationError(ToolkitError, ValueError):
    """A value that the interface's vocabulary says is wrong; nothing was sent.

    ``problems`` lists every bad value found.
    """

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


class TransportError(ToolkitError):
    """The service could not be reached or did not answer in time (after retries).

    ``maybe_sent`` is True when a try may have reached the service (a read timeout, a
    connection dropped after the request was written): a write may then have been carried out.
    """

    def __init__(
        self, message: str, operation: str | None = None, *, maybe_sent: bool = False
    ) -> None:
        self.operation = operation
        self.maybe_sent = maybe_sent
        super().__init__(f"{operation}: {message}" if operation else message)


class MalformedAnswerError(TransportError):
    """An answer that is neither a well-formed success nor a well-formed refusal: a body cut
    part-way or not JSON, or JSON of another shape than the operation answers (``[]`` to a
    batch call, ``{}`` to a read). ``expected`` and ``got`` say what.

    Something answered, so a write may have been carried out: ``maybe_sent`` is always True
    (applying a plan reports it ``unknown`` until the read-back settles it).

    >>> print(MalformedAnswerError("campaign.item", "an object with 'item'", "an empty object"))
    campaign.item: malformed answer: expected an object with 'item'; got an empty object
    """

    def __init__(self, operation: str | None, expected: str, got: str) -> None:
        self.expected = expected
        self.got = got
        super().__init__(f"malformed answer: expected {expected}; got {got}", operation)
        self.maybe_sent = True


class ApiError(ToolkitError):
    """The service answered with an error.

    ``operation`` names the call (``campaign.item``), ``http_status`` is the HTTP status and
    ``error_list`` the service's messages. For a single-campaign change that saved some items
    and refused others, ``outcomes`` holds each message parsed (see
    :func:`toolkit.client.results.parse_message`).

    ``maybe_sent`` is True when the request may have been carried out all the same: the
    answer was not a well-formed refusal (a 5xx, a gateway's own 408 or 524, an HTML page),
    or an earlier try of the same call may have landed (behind a 504, a dropped connection).
    """

    def __init__(
        self,
        operation: str,
        http_status: int,
        error_list: list[str],
        outcomes: list[dict[str, Any]] | None = None,
        *,
        maybe_sent: bool = False,
    ) -> None:
        self.operation = operation
        self.http_status = http_status
        self.error_list = list(error_list)
        self.outcomes = outcomes or []
        self.maybe_sent = maybe_sent
        shown = "; ".join(self.error_list[:5])
        if len(self.error_list) > 5:
            shown += f"; ... ({len(self.error_list) - 5} more)"
        super().__init__(f"{operation}: {shown or f'HTTP {http_status}'}")


class AuthError(ApiError):
    """The api-key is missing or unknown (HTTP 401).

    ``key_source`` says where the refused key came from (argument, environment variable,
    config file, key file, prompt) and ``key_detail`` its length and fingerprint; never the key.
    """

    def __init__(
        self,
        operation: str,
        http_status: int,
        error_list: list[str],
        key_source: str | None = None,
        key_detail: str | None = None,
        *,
        maybe_sent: bool = False,
    ) -> None:
        super().__init__(operation, http_status, error_list, maybe_sent=maybe_sent)
        self.key_source = key_source
        self.key_detail = key_detail
        if key_source:
            detail = f" ({key_detail})" if key_detail else ""
            self.args = (f"{self.args[0]}; the api-key from {key_source} was refused{detail}",)


class NotFoundError(ApiError):
    """The campaign, creative or path does not exist for this account."""


class RateLimitError(ApiError):
    """The service kept answering HTTP 429; ``retry_after`` is its last advice in seconds."""

    def __init__(
        self,
        operation: str,
        http_status: int,
        error_list: list[str],
        retry_after: float | None = None,
        *,
        maybe_sent: bool = False,
    ) -> None:
        super().__init__(operation, http_status, error_list, maybe_sent=maybe_sent)
        self.retry_after = retry_after


class IncompleteReadError(ToolkitError):
    """A part of the live account could not be read (after the client's retries), so no
    plan was made from it and nothing was sent.

    ``parts`` names each part that failed and why (``campaign 1000001 (campaign.item: HTTP
    500)``); the message shows the first five and counts the rest, on one line.
    """

    SHOWN = 5

    def __init__(self, parts: list[str]) -> None:
        self.parts = list(parts)
        shown = "; ".join(self.parts[: self.SHOWN])
        if len(self.parts) > self.SHOWN:
            shown += f"; ... and {len(self.parts) - self.SHOWN} more"
        super().__init__(
            f"could not read {len(self.parts)} part(s) of the live account, so no plan was"
            f" made and nothing was sent: {shown}"
        )


class PlanRefused(ToolkitError):
    """A guard refused the plan before any call; ``guard`` names it, ``details`` the numbers.

    Lift it with ``plan(..., allow={"<guard>"})``; on the command line, ``--allow <guard>``.
    ``how`` words the way to go ahead where the face has its own (a report's ``propose``);
    ``rule`` says what the guard refuses, with its thresholds, when the details do not.
    """

    def __init__(
        self, guard: str, details: list[str], how: str | None = None, rule: str | None = None
    ) -> None:
        self.guard = guard
        self.details = details
        self.rule = rule
        shown = "; ".join(details[:10]) + (
            f"; ... ({len(details) - 10} more)" if len(details) > 10 else ""
        )
        how = how or f"allow={{'{guard}'}} in Python, --allow {guard} on the command line"
        super().__init__(f"plan refused by guard '{guard}': {shown} (to go ahead: {how})")


class AccountMismatchError(ToolkitError):
    """A workbook exported from one account, planned with the key of another: refused before
    anything is read of the campaigns, so nothing is sent. ``exported`` and ``connected`` are
    the two accounts' user ids, ``path`` the workbook.

    >>> print(AccountMismatchError("book.xlsx", 1001, 1002))
    book.xlsx was exported from account 1001, connected to account 1002: export from 1002, \
or connect to 1001; nothing sent
    """

    def __init__(self, path: str, exported: int, connected: int) -> None:
        self.path = path
        self.exported = exported
        self.connected = connected
        super().__init__(
            f"{path} was exported from account {exported}, connected to account {connected}:"
            f" export from {connected}, or connect to {exported}; nothing sent"
        )


class PlanAccountError(AccountMismatchError):
    """A plan made against one account (or service), applied with the client of another:
    refused before anything is journaled or sent. ``what`` is ``"account"`` (``made`` and
    ``connected`` are user ids) or ``"service"`` (they are the services, as a journal names
    them); ``exported`` is ``made``, as for a workbook.

    >>> print(PlanAccountError(1001, 1002))
    the plan was made on account 1001, connected to account 1002: connect to 1001 to apply \
it, or plan again connected to 1002; nothing sent
    """

    def __init__(self, made: int | str, connected: int | str, what: str = "account") -> None:
        self.path = None
        self.made = self.exported = made
        self.connected = connected
        self.what = what
        ToolkitError.__init__(
            self,
            f"the plan was made on {what} {made}, connected to {what} {connected}: connect"
            f" to {made} to apply it, or plan again connected to {connected}; nothing sent",
        )


class SnapshotError(ToolkitError, ValueError):
    """A snapshot folder that cannot be read: no manifest, or another schema version."""


class CliError(ToolkitError):
    """A mistake on the command line (a file that is not a workbook, an unknown campaign)."""


class WorkbookProblem(NamedTuple):
    """One bad cell (or missing column) of a workbook: ``row`` is the Excel row number
    (the header is row 1; ``None`` for a whole sheet), ``column`` the header name."""

    sheet: str
    row: int | None
    column: str | None
    value: Any
    message: str

    def __str__(self) -> str:
        where = self.sheet or "file"
        if self.row is not None:
            where += f" row {self.row}"
        if self.column:
            where += f" [{self.column}]"
        value = "" if self.value is None else f" {self.value!r}:"
        return f"{where}:{value} {self.message}"


class WorkbookError(ToolkitError, ValueError):
    """A workbook that does not validate; nothing was read, so nothing can be sent.

    ``problems`` lists every :class:`WorkbookProblem` found (all sheets, all rows); the
    message shows the first 50 and counts the rest.

    >>> err = WorkbookError([WorkbookProblem("countries", 3, "bid", "abc", "not a number")])
    >>> print(err)
    1 problem in the workbook:
      countries row 3 [bid]: 'abc': not a number
    """

    #: How many problems the message shows.
    SHOWN = 50

    def __init__(self, problems: list[WorkbookProblem], path: str | None = None) -> None:
        self.problems = list(problems)
        self.path = path
        n = len(self.problems)
        where = f" {path}" if path else ""
        lines = [f"{n} problem{'s' if n != 1 else ''} in the workbook{where}:"]
        lines += [f"  {p}" for p in self.problems[: self.SHOWN]]
        if n > self.SHOWN:
            lines.append(f"  ... and {n - self.SHOWN} more")
        super().__init__("\n".join(lines))

    def to_frame(self) -> Any:
        """The problems as a DataFrame (sheet, row, column, value, message)."""
        import pandas as pd

        return pd.DataFrame(self.problems, columns=list(WorkbookProblem._fields))

    def _repr_html_(self) -> str:
        """The problems as an HTML table, for a notebook."""
        from html import escape

        first = escape(str(self).splitlines()[0])
        return f"<p><b>{first}</b></p>" + self.to_frame().to_html(index=False)


class StatsProblem(NamedTuple):
    """One bad value (or missing column) of a statistics export: ``line`` is the file's line
    (the header is line 1; the sheet's row for XLSX, the row number + 1 for Parquet; ``None``
    for the whole file), ``column`` the header name."""

    line: int | None
    column: str | None
    value: Any
    message: str

    def __str__(self) -> str:
        where = "file" if self.line is None else f"line {self.line}"
        if self.column:
            where += f" [{self.column}]"
        value = "" if self.value is None else f" {self.value!r}:"
        return f"{where}:{value} {self.message}"


class StatsError(ToolkitError, ValueError):
    """A statistics export that does not read; nothing was returned.

    ``problems`` lists every :class:`StatsProblem` found. The message groups the problems
    of one column with one message (``3 rows of "Cost": not a number (line 2: 'x', ...)``),
    shows a problem of the whole file (line ``None``) on a line of its own, and a single
    cause on one line.

    >>> print(StatsError([StatsProblem(3, "Cost", "abc", "not a number")], "stats.csv"))
    stats.csv: line 3 [Cost]: 'abc': not a number
    >>> print(StatsError([StatsProblem(n, "Date", "13/01", "not a date") for n in (2, 3, 4)]
    ...                  + [StatsProblem(None, None, None, "no key column")], "s.csv"))
    4 problems in s.csv:
      3 rows of "Date": not a date (line 2: '13/01', line 3: '13/01', line 4: '13/01')
      file: no key column
    """

    #: How many groups of problems the message shows.
    SHOWN = 20
    #: How many lines of a group the message names.
    EXAMPLES = 5

    def __init__(self, problems: list[StatsProblem], path: str | None = None) -> None:
        self.problems = list(problems)
        self.path = path
        n = len(self.problems)
        groups = self._groups()
        if len(groups) == 1:  # one cause: one line
            one = groups[0][0]
            text = self._group_line(groups[0]) if one.line is not None else one.message
            column = f" [{one.column}]" if one.line is None and one.column else ""
            super().__init__(f"{path or 'the statistics'}{column}: {text}")
            return
        lines = [f"{n:,} problem{'s' if n != 1 else ''} in {path or 'the statistics'}:"]
        lines += [f"  {self._group_line(g)}" for g in groups[: self.SHOWN]]
        if len(groups) > self.SHOWN:
            rest = sum(len(g) for g in groups[self.SHOWN :])
            lines.append(f"  ... and {rest:,} more")
        super().__init__("\n".join(lines))

    def _groups(self) -> list[list[StatsProblem]]:
        """The problems grouped by column and message (in order of first appearance); a
        problem of the whole file alone."""
        groups: dict[Any, list[StatsProblem]] = {}
        for i, p in enumerate(self.problems):
            key = ("file", i) if p.line is None else (p.column, p.message)
            groups.setdefault(key, []).append(p)
        return list(groups.values())

    def _group_line(self, group: list[StatsProblem]) -> str:
        if len(group) == 1:
            return str(group[0])
        first = group[0]
        shown = ", ".join(
            f"line {p.line}" + ("" if p.value is None else f": {p.value!r}")
            for p in group[: self.EXAMPLES]
        )
        more = ", ..." if len(group) > self.EXAMPLES else ""
        return f'{len(group):,} rows of "{first.column}": {first.message} ({shown}{more})'

    def to_frame(self) -> Any:
        """The problems as a DataFrame (line, column, value, message)."""
        import pandas as pd

        return pd.DataFrame(self.problems, columns=list(StatsProblem._fields))


class StatsNote(ToolkitError, UserWarning):
    """A warning about a statistics export that did read: rows left out on purpose (a
    tracker's totals row). The frame lists them too (``df.attrs["skipped"]``); the rules
    command shows the note among the plan's warnings.

    >>> print(StatsNote("stats.csv: skipped 1 totals row (line 42)"))
    stats.csv: skipped 1 totals row (line 42)
    """


class RuleProblem(NamedTuple):
    """One problem of a set of rules: ``rule`` is the rule's number (from 1; ``None`` for
    the whole set), ``name`` its name, ``field`` the field (``when``, ``action``...)."""

    rule: int | None
    name: str | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = "rules" if self.rule is None else f"rule {self.rule}"
        if self.name:
            where += f" {self.name!r}"
        if self.field:
            where += f" [{self.field}]"
        return f"{where}: {self.message}"


class RulesError(ToolkitError, ValueError):
    """Rules that do not validate; nothing was evaluated.

    >>> print(RulesError([RuleProblem(2, "cut", "action", "unknown action 'ban'")], "r.yaml"))
    1 problem in r.yaml:
      rule 2 'cut' [action]: unknown action 'ban'
    """

    def __init__(self, problems: list[RuleProblem], source: str | None = None) -> None:
        self.problems = list(problems)
        self.source = source
        n = len(self.problems)
        lines = [f"{n} problem{'s' if n != 1 else ''} in {source or 'the rules'}:"]
        lines += [f"  {p}" for p in self.problems]
        super().__init__("\n".join(lines))


__all__ = [
    "AccountMismatchError",
    "ApiError",
    "AuthError",
    "CliError",
    "ConfigError",
    "IncompleteReadError",
    "MalformedAnswerError",
    "NotFoundError",
    "PlanAccountError",
    "PlanRefused",
    "RateLimitError",
    "RuleProblem",
    "RulesError",
    "SnapshotError",
    "StatsError",
    "StatsNote",
    "StatsProblem",
    "ToolkitError",
    "TransportError",
    "ValidationError",
    "WorkbookError",
    "WorkbookProblem",
]
