"Files cogen writes are readable by the group and others (0644), whatever mkstemp or the figure writer default to."
import os
from pathlib import Path
import pandas as pd
from cogen_lib.results import Recorder, save_table, save_figure

def test_result_figure_table_modes(tmp_path):
    import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt
    old = os.umask(0o077)                       # the strictest common umask: what we write must still be 0644
    try:
        r = Recorder('toy', {'model': 'm'}, tmp_path/'r.csv'); r.add('acc', 1.0); r.save()
        fig, ax = plt.subplots(); ax.plot([0, 1]); ps = save_figure(fig, tmp_path, 'f'); plt.close(fig)
        ts = save_table(pd.DataFrame({'a': [1.0]}), tmp_path, 't')
    finally: os.umask(old)
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in [tmp_path/'r.csv', *ps, *ts]}
    assert set(modes.values()) == {'0o644'}, modes
