"""Compile limits: finite documented defaults, every limit fires (time, nodes, memory) in every phase
and language, CUDD's memory failures become CompilationLimitError, and the typed options and stats.

No timed assertions: how close the limits hold is printed by benchmarks/bench_limits.py.
"""

import random

import pytest

import kcxai
from kcxai.compilers import _limits, obdd, sdd
from kcxai.compilers._truth_table import TruthTableBuilder
from kcxai.compilers._limits import DEFAULT_MAX_MEMORY, DEFAULT_MAX_NODES, DEFAULT_MAX_SECONDS, Guard, LimitHit
from kcxai.compilers._options import DiagramOptions, ObddOptions, SddOptions
from kcxai.compilers._orders import ProbeBuilder
from kcxai.compilers._stats import ObddStats, SddStats
from kcxai.compilers.builder import FunctionBuilder
from tests._support.model_strategies import hard_naive_bayes

LANGUAGES = ["sdd", "obdd"]


class _Blowup:
    """Not a Classifier: a disjunction of random 25-literal cubes over 60 binary features (exponential OBDD)."""

    def __init__(self) -> None:
        self.space = kcxai.FeatureSpace([kcxai.Feature.categorical(f"b{i}", [0, 1]) for i in range(60)])
        self.classes = (0, 1)

    def build(self, builder):
        rng = random.Random(1)
        u = builder.false()
        for _ in range(100_000):
            cube = builder.true()
            for i in rng.sample(range(60), 25):
                cube = builder.conj(cube, builder.value_in(i, rng.choice((1, 2))))
            u = builder.disj(u, cube)
        return [builder.neg(u), u]


@pytest.fixture(scope="module")
def nb26():
    return hard_naive_bayes(26)


def test_defaults_are_finite_and_documented():
    for cls, module in ((SddOptions, sdd), (ObddOptions, obdd)):
        o = cls()
        assert (o.max_nodes, o.max_seconds, o.max_memory) == (DEFAULT_MAX_NODES, DEFAULT_MAX_SECONDS,
                                                              DEFAULT_MAX_MEMORY)
        assert None not in (o.max_nodes, o.max_seconds, o.max_memory)
        assert module.DEFAULTS == o.to_dict()
        for name in ("max_nodes", "max_seconds", "max_memory"):
            assert name in module.__doc__ and name in DiagramOptions.__doc__
    assert "300" in sdd.__doc__ and "4 GiB" in obdd.__doc__


@pytest.mark.parametrize("language", LANGUAGES)
def test_default_options_run_under_the_default_limits(monkeypatch, language):
    seen = []

    class Recording(Guard):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen.append((self.max_nodes, self.max_seconds, self.max_memory))

    monkeypatch.setattr(obdd if language == "obdd" else sdd, "Guard", Recording)
    kcxai.compile_model(kcxai.datasets.running_example_tree(), language)
    assert seen == [(DEFAULT_MAX_NODES, DEFAULT_MAX_SECONDS, DEFAULT_MAX_MEMORY)]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("order", ["auto", "dfs"])
def test_time_limit_stops_the_order_probe(nb26, language, order):
    """The probe alone runs for seconds on this model (exponential construction)."""
    with pytest.raises(kcxai.CompilationLimitError, match=r"exceeded max_seconds=0.2 while probing the model") as info:
        kcxai.compile_model(nb26, language, max_seconds=0.2, order=order)
    assert info.value.limit == "max_seconds"
    assert "model.rounded(step)" in str(info.value) and "another 'order'" in str(info.value)


@pytest.mark.parametrize("language", LANGUAGES)
def test_time_limit_stops_building(language):
    model = hard_naive_bayes(26)
    with pytest.raises(kcxai.CompilationLimitError, match=r"exceeded max_seconds=0.3 while building") as info:
        kcxai.compile_model(model, language, max_seconds=0.3, order="index")
    assert info.value.limit == "max_seconds"


@pytest.mark.parametrize("language", LANGUAGES)
def test_memory_limit_fires(nb26, language):
    with pytest.raises(kcxai.CompilationLimitError, match=r"exceeded max_memory=4 MiB .*resident memory grew") as info:
        kcxai.compile_model(nb26, language, max_memory=4 << 20, max_seconds=120)
    assert info.value.limit == "max_memory"
    assert "Raise 'max_memory'" in str(info.value)


@pytest.mark.parametrize("language", LANGUAGES)
def test_node_limit_while_building(language):
    with pytest.raises(kcxai.CompilationLimitError, match=r"exceeded max_nodes=500 while building") as info:
        kcxai.compile_model(hard_naive_bayes(14), language, max_nodes=500, order="index", max_seconds=120)
    assert info.value.limit == "max_nodes"
    reached = int(str(info.value).split(": ")[1].split(" nodes")[0])
    assert reached > 500


def test_cudd_out_of_memory_is_a_limit_error(monkeypatch):
    """CUDD is given max_memory as its own bound; with the RSS polls blinded, CUDD's failure (a NULL
    that dd turns into ValueError or SystemError) must still end as a CompilationLimitError."""
    pytest.importorskip("dd.cudd")
    monkeypatch.setattr(_limits, "resident_memory", lambda: 0)
    with pytest.raises(kcxai.CompilationLimitError, match=r"ran out of memory .*CUDD failed to allocate") as info:
        obdd.compile(_Blowup(), max_memory=32 << 20, max_nodes=None, max_seconds=120, reorder=False,
                     order="index")
    assert info.value.limit == "max_memory"
    assert info.value.__cause__ is None


def test_sdd_auto_order_falls_back_only_on_the_node_limit(monkeypatch):
    tree = kcxai.datasets.running_example_tree()

    def too_many(model, encoding, guard):
        raise LimitHit("too many", "max_nodes")

    monkeypatch.setattr(sdd, "_sifted_order", too_many)  # where sdd looks it up
    assert kcxai.compile_model(tree, "sdd").stats["order_from_obdd"] is False

    def too_slow(model, encoding, guard):
        raise LimitHit("too slow", "max_seconds")

    monkeypatch.setattr(sdd, "_sifted_order", too_slow)
    with pytest.raises(kcxai.CompilationLimitError, match="too slow"):
        kcxai.compile_model(tree, "sdd")


def test_a_model_passed_straight_is_compiled_within_the_probe_budget(monkeypatch):
    """A model passed straight to an explainer is compiled within the probe budget; past it, a method that
    certified sampling answers gets estimates (marked), one that needs counts a clear error naming the budget."""
    from kcxai.engines import choose as native

    monkeypatch.setattr(native, "PROBE", native.ProbeBudget(max_seconds=0.2))
    model = hard_naive_bayes(26)
    e = kcxai.min_idrs(model, (0,) * 26, 0.1)
    assert e.language == "sampling" and e.approximate
    with pytest.raises(kcxai.InvalidInputError, match=r"obdd did not compile within the probe budget \(0.2 s"):
        kcxai.is_idrs(model, (0,) * 26, [0], 0.1)


@pytest.mark.parametrize("options, error, message", [
    ({"max_memory": 0}, kcxai.InvalidInputError, r"'max_memory' must be a positive int or None. Got 0"),
    ({"max_memory": 1.5e9}, kcxai.InvalidTypeError, r"'max_memory' must be a positive int or None"),
    ({"max_seconds": float("nan")}, kcxai.InvalidInputError,
     r"'max_seconds' must be a positive number or None. Got nan"),
    ({"max_nodes": True}, kcxai.InvalidTypeError, r"'max_nodes' must be a positive int or None. Got True"),
    ({"encoding": ["log"]}, kcxai.InvalidInputError, r"'encoding' must be one of"),
])
@pytest.mark.parametrize("cls", [SddOptions, ObddOptions])
def test_option_values_are_checked(cls, options, error, message):
    with pytest.raises(error, match=message):
        cls.from_kwargs(**options)


def test_options_are_frozen_and_typed():
    o = ObddOptions.from_kwargs(order=["x1", "x2"], reorder=False)
    assert o.order == ("x1", "x2") and o.reorder is False and o.backend == "auto"
    with pytest.raises(AttributeError):
        o.reorder = True
    assert SddOptions.names() == ("order", "encoding", "max_nodes", "max_seconds", "max_memory", "construction",
                                  "vtree")
    assert set(ObddOptions.names()) - set(SddOptions.names()) == {"reorder", "backend", "max_work"}


@pytest.mark.parametrize("language, stats_cls", [("sdd", SddStats), ("obdd", ObddStats)])
def test_stats_are_the_typed_dataclass(language, stats_cls):
    c = kcxai.compile_model(kcxai.datasets.running_example_tree(), language, max_memory=1 << 30)
    d = dict(c.stats)
    assert d.pop("size_unit") == f"{language.upper()} nodes"  # CompiledModel.stats: the common CompileStats
    s = stats_cls(**d)
    assert s.to_dict() == d
    assert s.size == s.nodes > 0 and s.variables == 9 and s.compile_seconds >= s.build_seconds >= 0
    assert isinstance(s.memory_bytes, int) and 0 <= s.memory_bytes <= 1 << 30  # measured, within the limit
    c = kcxai.compile_model(kcxai.datasets.running_example_tree(), language, max_memory=None)
    assert c.stats["memory_bytes"] == 0


def test_builders_implement_the_public_protocol():
    space = kcxai.datasets.running_example_tree().space
    assert isinstance(TruthTableBuilder(space), FunctionBuilder)
    assert isinstance(ProbeBuilder(space), FunctionBuilder)
    assert issubclass(sdd.SddBuilder, kcxai.compilers.builder.DiagramBuilder)
    assert issubclass(obdd.BddBuilder, kcxai.compilers.builder.DiagramBuilder)


def test_guard_calls_on_late_once_and_then_times_out():
    guard = Guard("obdd", None, 1e-9, None)
    calls = []
    guard.on_late = lambda: calls.append(1)
    assert guard.late
    with pytest.raises(LimitHit, match="exceeded max_seconds=1e-09") as info:
        guard.tick()
    assert calls == [1] and info.value.limit == "max_seconds"
    with pytest.raises(LimitHit):
        guard.tick()
    assert calls == [1]


def test_no_limits_when_switched_off():
    guard = Guard("sdd", None, None, None)
    for _ in range(1000):
        guard.tick()
    guard.check(10**9)
    assert not guard.late and guard.peak_memory() == 0 and guard.remaining_seconds == float("inf")
    c = kcxai.compile_model(kcxai.datasets.running_example_tree(), "obdd", max_nodes=None, max_seconds=None,
                            max_memory=None)
    assert c.stats["memory_bytes"] == 0


def test_memory_poll_counts_growth_since_the_start():
    guard = Guard("sdd", None, None, 64 << 20)
    held = bytearray(32 << 20)  # touched: resident
    held[::4096] = b"\x01" * len(held[::4096])
    assert guard.peak_memory() >= 16 << 20
    guard.check()  # 32 MiB < 64 MiB
    more = bytearray(48 << 20)
    more[::4096] = b"\x01" * len(more[::4096])
    with pytest.raises(LimitHit, match=r"exceeded max_memory=64 MiB") as info:
        guard.check()
    assert info.value.limit == "max_memory"
    del held, more
