"""Rules over tracker statistics that become plans.

- :mod:`~toolkit.rules.model`: rules as data (:func:`load_rules`, :data:`METRICS`,
  :data:`ACTIONS`);
- :mod:`~toolkit.rules.evidence`: the numbers statistical rules decide on (Beta priors,
  posterior probabilities, Poisson chances);
- :mod:`~toolkit.rules.decide`: statistics to decisions with their evidence
  (:func:`toolkit.rules.decide.decide`);
- :mod:`~toolkit.rules.evaluate`: decisions to a plan (:func:`evaluate_rules`);
- :mod:`~toolkit.rules.over_set`: rules over the statistics of a set of accounts, a plan per
  account (:func:`evaluate_rules_set`);
- :mod:`~toolkit.rules.fit`: what of the statistics does not fit (items the service does not
  take, campaigns the account does not have, rows the reader skipped: ``result.fit``);
- :mod:`~toolkit.rules.memory`: what rules remember of their runs (a ``factor`` step made
  once per evidence, or once per ``cooldown``);
- :mod:`~toolkit.rules.changes`: the changes of planned decisions, for the preview's
  reasons and their outcomes (:func:`with_outcomes`);
- :mod:`~toolkit.rules.actions`: the planned decisions as an action workbook, for a review
  in Excel (:func:`to_actions`);
- :mod:`~toolkit.rules.backtest`: rules replayed day by day over past statistics
  (:func:`backtest`).

>>> from toolkit.rules import BetaPrior, prob_rate_below
>>> round(prob_rate_below(0.01, 0, 100, BetaPrior(1.0, 1.0)), 4)
0.6376
"""

from .actions import to_actions
from .backtest import Backtest, backtest, side_by_side
from .decide import DECISION_COLUMNS, Stats
from .evaluate import RulesResult, evaluate_rules, with_outcomes
from .evidence import (
    BetaPrior,
    break_even_rate,
    clicks_for_confidence,
    evidence_frame,
    fit_beta_prior,
    prob_rate_below,
    zero_conversion_p,
)
from .matching import match_cost_saved
from .model import ACTIONS, METRICS, Clause, Rule, load_rules
from .over_set import SetRulesResult, evaluate_rules_set

__all__ = [
    "ACTIONS",
    "Backtest",
    "DECISION_COLUMNS",
    "METRICS",
    "BetaPrior",
    "Clause",
    "Rule",
    "RulesResult",
    "SetRulesResult",
    "Stats",
    "backtest",
    "break_even_rate",
    "clicks_for_confidence",
    "evaluate_rules",
    "evaluate_rules_set",
    "evidence_frame",
    "fit_beta_prior",
    "load_rules",
    "match_cost_saved",
    "prob_rate_below",
    "side_by_side",
    "to_actions",
    "with_outcomes",
    "zero_conversion_p",
]
