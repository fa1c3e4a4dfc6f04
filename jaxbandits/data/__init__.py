"""Data loading: where files are found, how they are read and downloaded, and the table type.

Environments (:mod:`jaxbandits.envs`) hold what this package returns; it imports nothing of
theirs. Modules, each for one purpose:

* :mod:`~jaxbandits.data.catalog`: the known classification data sets (:data:`DATASETS`).
* :mod:`~jaxbandits.data.locate`: the search order (``path=``, ``$JAXBANDITS_DATA``, the per-user
  folder :func:`user_data_dir`, the download cache :func:`cache_dir`), :func:`find_data_file`
  and :class:`DataNotFoundError`.
* :mod:`~jaxbandits.data.readers`: one reader per file format, checking what it reads
  (:class:`DataFileError` names the file, and the line where one is at fault).
* :mod:`~jaxbandits.data.load`: :func:`load_dataset`, a data set's name to a table.
* :mod:`~jaxbandits.data.downloads`: :func:`download`, the only code that touches the network.
* :mod:`~jaxbandits.data.logged`: :class:`BanditLog`, logged bandit feedback, read by
  :func:`load_logs` (a CSV, Parquet, DataFrame or dict of columns) and :func:`load_obd_logs`
  (the Open Bandit Dataset's logs); :func:`obd_bts_prior`.
* :mod:`~jaxbandits.data.table`: :class:`DataTable`, :func:`make_table` (your own arrays) and
  :func:`normalize_features`.

Example::

    from jaxbandits.data import download, load_dataset
    download("mushroom")                         # once, into the cache
    table = load_dataset("mushroom", categorical="onehot")
"""

from jaxbandits.data.catalog import CATEGORICAL_ENCODINGS, DATASETS, DatasetInfo
from jaxbandits.data.downloads import download
from jaxbandits.data.load import load_dataset
from jaxbandits.data.locate import (
    DataNotFoundError,
    cache_dir,
    find_data_file,
    locate_file,
    search_dirs,
    user_data_dir,
)
from jaxbandits.data.logged import (
    OBD_CAMPAIGNS,
    OBD_POLICIES,
    BanditLog,
    load_logs,
    load_obd_logs,
    obd_bts_prior,
)
from jaxbandits.data.readers import DataFileError
from jaxbandits.data.table import (
    NORMALIZATIONS,
    DataTable,
    TableMeta,
    make_table,
    normalize_features,
)

__all__ = [
    "OBD_CAMPAIGNS",
    "OBD_POLICIES",
    "BanditLog",
    "CATEGORICAL_ENCODINGS",
    "DATASETS",
    "NORMALIZATIONS",
    "DataFileError",
    "DataNotFoundError",
    "DataTable",
    "DatasetInfo",
    "TableMeta",
    "cache_dir",
    "download",
    "find_data_file",
    "load_dataset",
    "load_logs",
    "load_obd_logs",
    "locate_file",
    "make_table",
    "normalize_features",
    "obd_bts_prior",
    "search_dirs",
    "user_data_dir",
]
