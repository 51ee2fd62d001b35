#!/usr/bin/env python3
"""Independent high-precision reference for the lmsr crate (mpmath, 80 digits).

Writes cases.json next to this file with the EXACT integer answers under the same
integer conditions the crate implements:
  buy:        largest s with ceil(C(q + s e_i) - C(q)) <= A   (and that ceil cost)
  sell:       floor(C(q) - C(q - s e_i))
  sell_for:   fewest s <= q_i with floor(proceeds(s)) >= R   (or unreachable)
  prices:     p_i * 10^36 (decimal string with fraction)
  liquidity:  floor(L / ln n)
  add:        ceil(C(q ++ [0]) - C(q))
and limits.json with the price-limit answers:
  buy_limit:  largest s with p_i(q + s e_i) <= L, and ceil(C(q + (s+1) e_i) - C(q)) - 1
  sell_limit: largest s <= q_i with p_i(q - s e_i) >= L
All integers are strings (they exceed JSON's safe range). Run:
  pip install mpmath && python3 crates/lmsr/tests/reference/gen_reference.py
"""
import json
import os
import random

from mpmath import mp, mpf, exp, expm1, log, log1p, floor, ceil

mp.dps = 80
MAXV = 2 ** 126
rng = random.Random(20240601)


class Cost:
    """C(q) = m + b * log1p(rest), kept as (integer m, real b*log1p(rest)) so that differences
    of nearly equal costs (prices within e^-1e11 of 1) keep full precision and exact floors."""

    def __init__(self, b, q):
        m = max(q)
        k = q.index(m)
        rest = sum(exp((mpf(x) - m) / b) for j, x in enumerate(q) if j != k)
        self.m, self.frac = m, mpf(b) * log1p(rest)

    def __sub__(self, other):
        return Diff(self.m - other.m, self.frac - other.frac)


class Diff:
    def __init__(self, whole, frac):
        self.whole, self.frac = whole, frac

    def floor(self):
        return self.whole + int(floor(self.frac))

    def ceil(self):
        return self.whole + int(ceil(self.frac))


def C(b, q):
    return Cost(b, q)


def price(b, q, i):
    m = max(q)
    w = [exp((mpf(x) - m) / b) for x in q]
    return w[i] / sum(w)


def one_minus_price(b, q, i):
    """1 - p_i from the other weights, so it keeps full relative precision near p_i = 1."""
    m = max(q)
    w = [exp((mpf(x) - m) / b) for x in q]
    return sum(w[:i] + w[i + 1:]) / sum(w)


def cost(b, q, i, s, c0):
    q2 = list(q)
    q2[i] += s
    return C(b, q2) - c0


def proceeds(b, q, i, s, c0):
    q2 = list(q)
    q2[i] -= s
    return c0 - C(b, q2)


def exact_buy(b, q, i, a):
    c0 = C(b, q)
    p = price(b, q, i)
    est = mpf(b) * log(1 + expm1(mpf(a) / b) / p)
    s = max(int(floor(est)) - 2, 0)
    while s > 0 and cost(b, q, i, s, c0).ceil() > a:
        s -= 1
    while cost(b, q, i, s + 1, c0).ceil() <= a:
        s += 1
    return s, (int(cost(b, q, i, s, c0).ceil()) if s > 0 else 0)


def exact_sell_for(b, q, i, r):
    c0 = C(b, q)
    p = price(b, q, i)
    # 1 - (1 - e^-x)/p = (e^-x - (1 - p)) / p, without cancelling 1 - p
    arg = (exp(-mpf(r) / b) - one_minus_price(b, q, i)) / p
    if arg <= 0:
        return None
    est = -mpf(b) * log(arg)
    if est > q[i] + 2:
        return None
    s = min(max(int(ceil(est)) + 2, 1), q[i])
    if proceeds(b, q, i, s, c0).floor() < r:
        return None
    while s > 1 and proceeds(b, q, i, s - 1, c0).floor() >= r:
        s -= 1
    return s, proceeds(b, q, i, s, c0).floor()


def log_uniform(lo_exp, hi_exp):
    e = rng.uniform(lo_exp, hi_exp)
    return max(1, int(mpf(10) ** e))


def market():
    b = rng.choice([10 ** 3, 10 ** 6, 10 ** 18, 10 ** 24, 10 ** 30, 10 ** 36, log_uniform(3, 36)])
    n = rng.choice([2, 2, 3, 5, 8, 64])
    kind = rng.random()
    if kind < 0.25:
        q = [0] * n
    elif kind < 0.5:
        q = [rng.randrange(0, 3 * b) for _ in range(n)]
    elif kind < 0.75:
        # one outcome at price ~ 1 - 1e-30: q_0 - q_j ~ 69 b + b ln(n - 1)
        base = rng.randrange(0, b)
        lead = int(mpf(b) * (69 + log(n - 1))) + base
        q = [base] * n
        q[rng.randrange(n)] = lead
    else:
        q = [rng.randrange(0, 80 * b) for _ in range(n)]
    q = [min(x, MAXV) for x in q]
    return b, q, rng.randrange(n)


def main():
    cases = []
    while len(cases) < 700:
        b, q, i = market()
        kind = rng.choice(["buy", "buy", "sell", "sell_for", "prices", "liquidity", "add"])
        qs = [str(x) for x in q]
        if kind == "buy":
            a = rng.choice([1, 2, 1000, 10 ** 18, 10 ** 36, log_uniform(0, 36)])
            s, c = exact_buy(b, q, i, a)
            if s > MAXV:
                continue
            cases.append(dict(kind=kind, b=str(b), q=qs, outcome=i, amount=str(a), shares=str(s), cost=str(c)))
        elif kind == "sell":
            if q[i] == 0:
                q[i] = log_uniform(0, 36)
                qs = [str(x) for x in q]
            s = rng.choice([1, q[i], max(1, q[i] // 2), min(q[i], log_uniform(0, 36))])
            pr = proceeds(b, q, i, s, C(b, q)).floor()
            cases.append(dict(kind=kind, b=str(b), q=qs, outcome=i, shares=str(s), proceeds=str(pr)))
        elif kind == "sell_for":
            if q[i] == 0:
                q[i] = log_uniform(0, 36)
                qs = [str(x) for x in q]
            r = rng.choice([1, 1000, 10 ** 18, log_uniform(0, 36)])
            res = exact_sell_for(b, q, i, r)
            d = dict(kind=kind, b=str(b), q=qs, outcome=i, target=str(r))
            if res is None:
                d["unreachable"] = True
            else:
                d["shares"], d["proceeds"] = str(res[0]), str(res[1])
            cases.append(d)
        elif kind == "prices":
            ps = [mp.nstr(price(b, q, j) * mpf(10) ** 36, 50, strip_zeros=False) for j in range(len(q))]
            cases.append(dict(kind=kind, b=str(b), q=qs, prices_e36=ps))
        elif kind == "liquidity":
            n = len(q)
            liq = log_uniform(0, 37)
            bb = int(floor(mpf(liq) / log(n)))
            if bb > MAXV:
                continue
            cases.append(dict(kind=kind, liquidity=str(liq), n=n, b=str(bb)))
        else:
            if len(q) >= 64:
                continue
            c = (C(b, q + [0]) - C(b, q)).ceil()
            cases.append(dict(kind=kind, b=str(b), q=qs, cost=str(c)))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.json")
    with open(out, "w") as f:
        json.dump({"digits": mp.dps, "cases": cases}, f, indent=0)
    print("wrote", len(cases), "cases to", out)


def price_at(b, q, i, t):
    """p_i with q_i := t, as 1 / (1 + sum_j e^{(q_j - t)/b}): full relative precision near 0 and 1."""
    return 1 / (1 + sum(exp((mpf(x) - t) / b) for j, x in enumerate(q) if j != i))


def limit_point(b, q, i, limit):
    """The real t at which p_i reaches limit: t = m + b ln(L R / (1 - L)), R relative to m."""
    m = max(x for j, x in enumerate(q) if j != i)
    rest = sum(exp((mpf(x) - m) / b) for j, x in enumerate(q) if j != i)
    return m + mpf(b) * (log(limit) + log(rest) - log(1 - limit))


def exact_buy_limit(b, q, i, limit):
    t = limit_point(b, q, i, limit)
    s = max(int(floor(t)) - q[i] + 2, 0)
    while s > 0 and price_at(b, q, i, q[i] + s) > limit:
        s -= 1
    if price_at(b, q, i, q[i] + s) > limit:
        return None
    while price_at(b, q, i, q[i] + s + 1) <= limit:
        s += 1
    return s, cost(b, q, i, s + 1, C(b, q)).ceil() - 1


def exact_sell_limit(b, q, i, limit):
    t = limit_point(b, q, i, limit)
    s = min(max(q[i] - int(ceil(t)) + 2, 0), q[i])
    while s > 0 and price_at(b, q, i, q[i] - s) < limit:
        s -= 1
    if price_at(b, q, i, q[i] - s) < limit:
        return 0
    while s < q[i] and price_at(b, q, i, q[i] - s - 1) >= limit:
        s += 1
    return s


def limits():
    """Separate cases with their own seed, so cases.json stays as it was."""
    global rng
    rng = random.Random(20261201)
    cases = []
    while len(cases) < 300:
        b, q, i = market()
        buying = rng.random() < 0.5
        now = price_at(b, q, i, q[i])
        # Mostly limits the trade reaches (just past the price now), some anywhere in (0, 1).
        near = now * (1 + mpf(rng.random()) / 2) if buying else now * (1 - mpf(rng.random()) / 2)
        limit = rng.choice([near, near, mpf(rng.randrange(1, 10 ** 6)) / 10 ** 6, mpf(rng.randrange(1, 10 ** 18)) / 10 ** 18, mpf(1) / len(q)])
        if not 0 < limit < 1:
            continue
        limit = floor(limit * mpf(10) ** 36) / mpf(10) ** 36
        if limit <= 0:
            continue
        qs = [str(x) for x in q]
        if buying:
            res = exact_buy_limit(b, q, i, limit)
            if res is None or res[0] + q[i] >= MAXV:
                continue
            cases.append(dict(kind="buy_limit", b=str(b), q=qs, outcome=i, limit_e36=str(int(floor(limit * mpf(10) ** 36 + mpf(1) / 2))), shares=str(res[0]), max_cost=str(res[1])))
        else:
            if q[i] == 0:
                q[i] = log_uniform(0, 36)
                qs = [str(x) for x in q]
            s = exact_sell_limit(b, q, i, limit)
            cases.append(dict(kind="sell_limit", b=str(b), q=qs, outcome=i, limit_e36=str(int(floor(limit * mpf(10) ** 36 + mpf(1) / 2))), shares=str(s)))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "limits.json")
    with open(out, "w") as f:
        json.dump({"digits": mp.dps, "cases": cases}, f, indent=0)
    print("wrote", len(cases), "limit cases to", out)


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["limits"]:
        limits()
    else:
        main()
        limits()
