"""Results -> sentences: the only place that writes a verdict's prose.

Each module here mirrors one module of judges (``fusion``, ``layer_choice``, ``agreement``,
``families``, ``pruning``, ``selection``, ...) and holds, per judge, one function that turns the
judge's :class:`~lrd.verdicts.result.Result` into its :class:`~lrd.verdicts.record.Verdict`:
the evidence sentence, the test's name, what ``p_against`` tests, the effect's label, the
reconstruction and the note. These modules import the result and the claims table, never a
judge module (a judge module calls its wording, not the other way), so a change of words
touches no statistic and the statistics are tested without parsing English.
"""
