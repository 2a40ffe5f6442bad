"""The one Spark session of a process.

``get_spark(master=None)`` returns the session every part of the workbench shares (a test run,
a notebook kernel, a CLI sweep): the first call starts it (about 5-10 s), later calls return it.

* Master: the ``master`` argument, else the ``SPARK_MASTER`` environment variable, else the
  embedded ``local[*]``. A ``spark://host:port`` URL points the same code at a standalone
  cluster.
* ``get_spark()`` without a master returns the active session whatever its master (even when
  ``SPARK_MASTER`` names another one). Asking for a *different* master than the active
  session's stops the active session and starts a new one: objects from the old session
  (DataFrames, the old ``SparkSession``) are unusable afterwards.
* Settings: UI off (``spark.ui.enabled=false``, no console progress bar), few shuffle
  partitions (N for ``local[N]``, else 4), a driver heap of a quarter of the machine's memory
  (``driver_memory_for``; Spark's 1 GB default cannot broadcast TPC-H Q9's build side at SF 1),
  log level ERROR (the driver JVM starts with a log4j2
  configuration at level ERROR, so even its start-up stays quiet; ``setLogLevel("ERROR")``
  covers a context started elsewhere); the driver JVM's console output goes to
  ``jvm_log_path()`` in the temp dir (quoted in the error if Spark fails to start). Local masters bind to 127.0.0.1 (``SPARK_LOCAL_IP`` is
  set to it unless already set).
* Python: executors must run this interpreter (the system ``python3`` lacks pandas), so
  ``PYSPARK_PYTHON`` and ``PYSPARK_DRIVER_PYTHON`` are set to ``sys.executable`` before the
  session starts. For a ``local`` master that is unconditional; for a cluster master an
  interpreter already named in ``PYSPARK_PYTHON`` is kept (the workers' path may differ).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only; pyspark is imported lazily
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
DEFAULT_SHUFFLE_PARTITIONS = 4
APP_NAME = "staleness-lab"

_session: SparkSession | None = None
_lock = threading.RLock()
_LOCAL_N = re.compile(r"^local\[(\d+)(?:,\s*\d+)?\]$")


def resolve_master(master: str | None = None) -> str:
    """The master a new session would use: ``master``, else ``$SPARK_MASTER``, else local[*]."""
    return master or os.environ.get("SPARK_MASTER") or DEFAULT_MASTER


def java_available() -> bool:
    """Whether a Java runtime can be found (``JAVA_HOME`` or ``java`` on PATH)."""
    home = os.environ.get("JAVA_HOME")
    return bool(home and (Path(home) / "bin" / "java").exists()) or shutil.which("java") is not None


def _is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def shuffle_partitions_for(master: str) -> int:
    """N for ``local[N]``, else :data:`DEFAULT_SHUFFLE_PARTITIONS`."""
    match = _LOCAL_N.match(master)
    return max(1, int(match.group(1))) if match else DEFAULT_SHUFFLE_PARTITIONS


def machine_memory_bytes() -> int:
    """Physical memory, lowered to the cgroup's ``memory.max`` when one is set."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    with contextlib.suppress(OSError, ValueError):
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            total = min(total, int(limit))
    return total


def driver_memory_for(total_bytes: int) -> str:
    """``spark.driver.memory`` for a machine of ``total_bytes``: a quarter of it in whole MiB,
    at least Spark's default 1 GiB and at most 16 GiB. In local mode the driver JVM is the whole
    cluster, so its heap bounds every broadcast and cached table; the heap is reserved, not
    committed, so a large one costs nothing until used."""
    mib = total_bytes // 4 // 2**20
    return f"{min(max(mib, 1024), 16 * 1024)}m"


def _alive(session: SparkSession | None) -> bool:
    return session is not None and getattr(session.sparkContext, "_jsc", None) is not None


def active_spark() -> SparkSession | None:
    """The session :func:`get_spark` would return without starting one, or None.

    A session started elsewhere in the process (``SparkSession.builder.getOrCreate()`` in a
    notebook) is adopted."""
    global _session
    with _lock:
        if _alive(_session):
            return _session
        _session = None
        if "pyspark" not in sys.modules:
            return None
        from pyspark import SparkContext

        if SparkContext._active_spark_context is None:
            return None
        from pyspark.sql import SparkSession

        _session = SparkSession.builder.getOrCreate()
        return _session


def _set_environment(master: str) -> None:
    for var in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        if _is_local(master) or not os.environ.get(var):
            os.environ[var] = sys.executable
    if _is_local(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


_LOG4J2 = """\
# staleness-lab: Spark driver logging at ERROR, to stderr
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
# the shell-style start-up (spark-submit for pyspark) at the root's level too, so Spark keeps
# ERROR instead of announcing its WARN default
logger.submit.name = org.apache.spark.deploy.SparkSubmit
logger.submit.level = error
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
"""


def _log4j2_file() -> Path:
    """A log4j2 configuration at level ERROR, written once per content under the temp dir."""
    digest = hashlib.sha256(_LOG4J2.encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / f"staleness-lab-log4j2-{digest}.properties"
    if not path.is_file():
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w") as fh:
            fh.write(_LOG4J2)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    return path


def get_spark(master: str | None = None, *, shuffle_partitions: int | None = None, **conf: Any) -> SparkSession:
    """The process's Spark session, started on first use (see the module docstring).

    ``shuffle_partitions`` overrides ``spark.sql.shuffle.partitions``; ``conf`` adds Spark
    settings (dots as given, e.g. ``get_spark(**{"spark.executor.memory": "2g"})``) and, like
    ``shuffle_partitions``, only applies when a new session starts.
    """
    global _session
    with _lock:
        current = active_spark()
        if current is not None:
            if master is None or master == current.sparkContext.master:
                return current
            stop_spark()
        wanted = resolve_master(master)
        _set_environment(wanted)
        from pyspark.sql import SparkSession

        builder = (
            SparkSession.builder.master(wanted)
            .appName(APP_NAME)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", str(shuffle_partitions or shuffle_partitions_for(wanted)))
            .config("spark.pyspark.python", os.environ["PYSPARK_PYTHON"])
            .config("spark.pyspark.driver.python", os.environ["PYSPARK_DRIVER_PYTHON"])
            .config("spark.driver.memory", driver_memory_for(machine_memory_bytes()))
        )
        if _is_local(wanted):
            builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        if "spark.driver.extraJavaOptions" not in conf:
            try:
                options = f"-Dlog4j2.configurationFile={_log4j2_file().as_uri()}"
            except OSError:  # no writable temp dir: keep Spark's default start-up logging
                options = None
            if options:
                builder = builder.config("spark.driver.extraJavaOptions", options)
        for key, value in conf.items():
            builder = builder.config(key, str(value))
        with _jvm_output_to_log() as log:
            before = _children()
            try:
                try:
                    session = builder.getOrCreate()
                except BaseException:
                    _kill(_children() - before)
                    raise
            except Exception as err:
                raise RuntimeError(f"Spark did not start ({err}); the JVM said:\n{_tail(log)}") from err
        session.sparkContext.setLogLevel("ERROR")
        _session = session
        return session


def _children() -> set[int]:
    """This process's child processes (Linux's ``/proc``; none found elsewhere)."""
    me = str(os.getpid())
    found = set()
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError, IndexError):
                    with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as f:
                        if f.read().rsplit(")", 1)[1].split()[1] == me:  # the field after the state: the parent
                            found.add(int(entry.name))
    return found


def _kill(pids: set[int]) -> None:
    """End the driver JVM of a start cut short (Ctrl-C, SIGTERM or a failure while it was
    starting): pyspark's gateway launcher leaves it running when interrupted before the JVM has
    connected back, and it then outlives this process, idle, holding its memory."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def jvm_log_path() -> Path:
    """Where the driver JVM of this process writes its console output (see get_spark)."""
    return Path(tempfile.gettempdir()) / f"staleness-lab-spark-{os.getpid()}.log"


@contextlib.contextmanager
def _jvm_output_to_log() -> Iterator[Path]:
    """Point file descriptors 1 and 2 at :func:`jvm_log_path` while the driver JVM starts.

    The JVM inherits them for its lifetime, so its console chatter (e.g. "WARNING: Using
    incubator modules") lands in the log instead of a terminal, a notebook's stderr or a
    rendered report; this process's own descriptors are restored at once.
    """
    path = jvm_log_path()
    saved = []
    try:
        with open(path, "ab") as log:
            for fd in (1, 2):
                for stream in (sys.stdout, sys.stderr):
                    stream.flush()
                saved.append((fd, os.dup(fd)))
                os.dup2(log.fileno(), fd)
    except OSError:  # no writable temp dir or no descriptors to redirect: leave output as it is
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)
        saved = []
    try:
        yield path
    finally:
        for fd, copy in saved:
            os.dup2(copy, fd)
            os.close(copy)


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no JVM log)"


def stop_spark() -> None:
    """Stop the process's session if one is running (the next :func:`get_spark` starts anew)."""
    global _session
    with _lock:
        session = active_spark()
        _session = None
        if session is not None:
            session.stop()
