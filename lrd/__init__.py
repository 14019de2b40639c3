"""lrd: layer-wise representation dynamics of language models, measured reproducibly."""

__version__ = "0.1.0"

from lrd import book, layer_choice, metrics, plots, report, tasks
from lrd.assets import fetch, lrd_home
from lrd.evaluate import evaluate_layers
from lrd.extract import extract, pool
from lrd.models import LoadedModel, load_model
from lrd.tasks import Task, load_task

__all__ = ["LoadedModel", "Task", "book", "evaluate_layers", "extract", "fetch", "layer_choice", "load_model",
           "load_task", "lrd_home", "metrics", "plots", "pool", "report", "tasks", "__version__"]
