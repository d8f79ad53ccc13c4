"""Input files -> prepared entries (entry, paper id, plain text, label), in order: the pure,
CPU-heavy half of a build, run in worker processes when the input is large."""

import collections
import concurrent.futures
import gc
import multiprocessing
import os
import signal
import threading

from loader.lifetime import die_with_parent
from loader.read.sources import read_source
from loader.records import Problem
from loader.rules.labels import derive_label
from loader.rules.markup import plain_text
from loader.rules.merge import identifying_title, version_keys
from loader.rules.normalize import paper_id

# parsing and normalizing is pure, per file, and most of the CPU time: worker processes do it
# while this one writes SQLite. Below this much input starting them costs more than it saves.
PARALLEL_MIN_BYTES = 8_000_000
FILES_IN_FLIGHT = 2  # per worker: memory stays bounded whatever the corpus size
MAX_WORKERS = 2


def prepare_entry(item):
    """Entry -> (entry, paper id, plain text, label, version keys): the pure, CPU-heavy part
    of loading it. The plain text is None where it is the abstract itself (about half the
    papers: a worker then sends the text once). Problems pass through."""
    if isinstance(item, Problem):
        return item
    text = plain_text(item.abstract)
    label = item.title or derive_label(text)
    plain = None if text == item.abstract else text
    return item, entry_paper_id(item), plain, label, version_keys(item, text)


def entry_paper_id(entry):
    """An entry's paper id: its abstract's, with its title's words where it has a title."""
    return paper_id(entry.abstract, identifying_title(entry.title))


def prepare_source(file, forced_format=None):
    source, items = read_source(file, forced_format)
    return source, map(prepare_entry, items)


def prepare_source_eagerly(file, forced_format):
    """In a worker process: everything for one file, sent back in one piece."""
    source, items = prepare_source(file, forced_format)
    return source, list(items)


def start_worker(build_pid, method):
    stop_with_build(build_pid, method)
    # forked from a build that may have paused its cyclic collector (build.py): parsing
    # leaves ~2 objects an entry in cycles (markup trees)
    gc.enable()


def stop_with_build(build_pid, method):
    """In each worker, first: die with the build, so kill -9 of the build leaves no worker
    parsing on. With "forkserver" the forkserver is the parent, and it exits with the build."""
    die_with_parent(signal.SIGKILL)  # a worker holds nothing that needs a clean exit
    # the build may have died before that call: then no signal would ever come
    if method == "fork":
        alive = os.getppid() == build_pid  # reparented as soon as the build dies
    else:  # the build holds the other end of this pipe; siblings never do
        alive = multiprocessing.parent_process().is_alive()
    if not alive:
        os._exit(1)


def input_bytes(files):
    total = 0
    for file in files:
        try:
            total += os.path.getsize(file)
        except OSError:
            pass  # read_source reports it
    return total


def prepared_sources(files, forced_format, workers):
    """(source, prepared items) for each file, in the order given, parsed by `workers`
    processes (none: in this one). Order and results do not depend on the worker count."""
    if not workers:
        for file in files:
            yield prepare_source(file, forced_format)
        return
    # fork starts workers at once and re-imports nothing (a caller's script without a
    # __main__ guard would run again), but is only safe while no other thread runs
    method = "fork" if threading.active_count() == 1 else "forkserver"
    context = multiprocessing.get_context(method)
    with concurrent.futures.ProcessPoolExecutor(
        workers,
        mp_context=context,
        initializer=start_worker,
        initargs=(os.getpid(), method),
    ) as pool:
        remaining = iter(files)
        in_flight = collections.deque()
        for file in remaining:
            in_flight.append(pool.submit(prepare_source_eagerly, file, forced_format))
            if len(in_flight) >= workers * FILES_IN_FLIGHT:
                break
        while in_flight:
            result = in_flight.popleft().result()
            file = next(remaining, None)
            if file is not None:
                in_flight.append(pool.submit(prepare_source_eagerly, file, forced_format))
            yield result


def worker_count(files, workers):
    if workers is not None:
        return workers
    if len(files) < 2 or input_bytes(files) < PARALLEL_MIN_BYTES:
        return 0
    # one worker per CPU, at most two (each costs ~40 MB; the whole build stays under 500 MB
    # at 1M papers). Writing takes this process a third of the CPU parsing takes: with one
    # worker per *other* CPU, a 2-CPU build waited on its only worker with a core half idle
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))
