"""Stand-ins for a compiler's builder that record what the threshold construction asks for."""


class HashCons:
    """Stands in for ``kcxai.compilers._threshold.FeatureBlock.assemble``: canonical node ids, so equal
    sub-functions get equal ids.

    Records every request, to check that the interval cache never asks for
    the same sub-function twice.
    """

    def __init__(self):
        self.table = {}
        self.requests = []

    def assemble(self, block, builder, children):
        cases = tuple(children)
        if all(c == cases[0] for c in cases):
            return cases[0]
        key = (block.feature, cases)
        self.requests.append(key)
        if key not in self.table:
            self.table[key] = len(self.table) + 2
        return self.table[key]


class Constants:
    """A builder for the constants and the final negation only (the nodes come from ``HashCons``)."""

    def __init__(self, space):
        self.space = space

    def true(self):
        return 1

    def false(self):
        return 0

    def neg(self, a):
        return ("not", a)
