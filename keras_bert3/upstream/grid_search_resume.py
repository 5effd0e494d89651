"""A KerasTuner grid search that resumes: `GridSearchOracle` keeps the order of its trials' combinations
(`_ordered_ids`) and the trials whose next combination is still to be made (`_populate_next`) in memory only, so a
search reloaded from its `oracle.json` fails at its next trial (KeyError in `LinkedList.next`) or ends early. Both are
rebuilt here from the trials the oracle reloaded, in the order they started.

Private API (keras-tuner): `GridSearchOracle._ordered_ids` (a `LinkedList` with `insert(data, data_pre)`) and
`_populate_next` (a list of trial ids), set in `GridSearchOracle.__init__`."""


def restore_grid_order(oracle) -> None:
    """Makes the reloaded `oracle` (a `keras_tuner.oracles.GridSearchOracle`) go on from its last started trial."""
    import keras_tuner

    from keras_bert3.upstream.private_api import require_private

    for name in ("_ordered_ids", "_populate_next"):
        require_private(oracle, name, package=keras_tuner, why="a grid search resumed from its oracle.json")
    if not oracle.start_order:
        return
    try:
        oracle._ordered_ids.next(oracle.start_order[0])
        return  # In memory: nothing to rebuild.
    except KeyError:
        pass
    previous = None
    for trial_id in oracle.start_order:
        oracle._ordered_ids.insert(trial_id, previous)
        previous = trial_id
    oracle._populate_next.append(previous)  # Its next combination is the next trial's (a retried one: again, skipped).
