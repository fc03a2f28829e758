"""Bid estimate reports: every campaign's country bids against the service's minimum and
recommended price, the traffic they buy, proposals that become plans, and a price history.

>>> import toolkit
>>> report = toolkit.bid_report(client, ctr=0.01)                     # doctest: +SKIP
>>> report.frame                                                      # doctest: +SKIP
>>> report.proposals("minimum")                                       # doctest: +SKIP
>>> report.propose("minimum").apply(client)                           # doctest: +SKIP
>>> toolkit.price_history(country="US")                               # doctest: +SKIP

Modules: :mod:`~toolkit.reports.units` (price units, CPM <-> CPC),
:mod:`~toolkit.reports.zones` (position, zones, traffic interpolation),
:mod:`~toolkit.reports.queries` (price queries from targeting, asked once each),
:mod:`~toolkit.reports.frame` (the report's columns), :mod:`~toolkit.reports.proposals`,
:mod:`~toolkit.reports.sensitivity`, :mod:`~toolkit.reports.history` (the price history) and
:mod:`~toolkit.reports.report` (``bid_report``, ``BidReport``) and
:mod:`~toolkit.reports.over_set` (a report of a set of accounts, ``SetReport``).
"""

from .history import price_history
from .over_set import SetReport
from .report import BidReport, bid_report

__all__ = ["BidReport", "SetReport", "bid_report", "price_history"]
