"""Rules over tracker statistics that become plans; :mod:`~toolkit.rules.evidence` holds
the numbers they decide on (Beta priors, posterior probabilities, Poisson chances).

>>> from toolkit.rules import BetaPrior, prob_rate_below
>>> round(prob_rate_below(0.01, 0, 100, BetaPrior(1.0, 1.0)), 4)
0.6376
"""

from .evidence import (
    BetaPrior,
    break_even_rate,
    clicks_for_confidence,
    evidence_frame,
    fit_beta_prior,
    prob_rate_below,
    zero_conversion_p,
)

__all__ = [
    "BetaPrior",
    "break_even_rate",
    "clicks_for_confidence",
    "evidence_frame",
    "fit_beta_prior",
    "prob_rate_below",
    "zero_conversion_p",
]
