"""lrd: layer-wise representation dynamics of language models, measured reproducibly."""

__version__ = "0.1.0"

from lrd import aggregation, book, cayley, metrics, plots, report, tasks
from lrd.ablation import removed_layers
from lrd.assets import fetch, lrd_home
from lrd.evaluate import evaluate_layers
from lrd.extract import extract, extract_variants, pool
from lrd.models import LoadedModel, load_model
from lrd.report import Glue
from lrd.verdicts import Verdict
from lrd.tasks import Task, load_task

__all__ = ["Glue", "LoadedModel", "Task", "Verdict", "aggregation", "book", "cayley", "evaluate_layers", "extract",
           "extract_variants", "fetch", "load_model", "load_task", "lrd_home", "metrics", "plots", "pool", "removed_layers",
           "report", "tasks", "__version__"]
