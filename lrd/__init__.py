"""lrd: layer-wise representation dynamics of language models, measured reproducibly."""

__version__ = "0.1.0"

from lrd import metrics, plots, report, tasks
from lrd import aggregation, cayley  # Cayley-graph layer aggregation (chapter cayley_aggregation)
from lrd.assets import fetch, lrd_home
from lrd.extract import extract, pool
from lrd.models import LoadedModel, load_model
from lrd.tasks import Task, load_task

__all__ = ["LoadedModel", "aggregation", "cayley", "Task", "extract", "fetch", "load_model", "load_task", "lrd_home", "metrics",
           "plots", "pool", "report", "tasks", "__version__"]
