"""lrd: layer-wise representation dynamics of language models, measured reproducibly."""

__version__ = "0.1.0"

from lrd import metrics, plots, report, tasks
from lrd.ablation import removed_layers
from lrd.assets import fetch, lrd_home
from lrd.extract import extract, pool
from lrd.models import LoadedModel, load_model
from lrd.tasks import Task, load_task

__all__ = ["removed_layers", "LoadedModel", "Task", "extract", "fetch", "load_model", "load_task", "lrd_home", "metrics",
           "plots", "pool", "report", "tasks", "__version__"]
