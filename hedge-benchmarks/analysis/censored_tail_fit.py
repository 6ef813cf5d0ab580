"""Off-line check: can a fitted tail place the unhedged p99.9 from censored primaries?

Draws N calls (primary and hedge latencies i.i.d.), hedges at the true (1 - b) quantile, censors
each primary a winning hedge cancels (at delay + hedge latency), then fits a generalized Pareto
tail by censored maximum likelihood to the primaries above a threshold u, where the Kaplan-Meier
survival is K times its value at the last point with 50 primaries at risk, and extrapolates p99.9.
Prints, per seed: plain Kaplan-Meier p99.9 / true, fitted p99.9 / true, the fitted shape, the
events and samples above u. Needs numpy and scipy; not part of the build (docs/benchmarks.md 2.1).

usage: python3 censored_tail_fit.py FAMILY BUDGET CALLS SEEDS K
  FAMILY: pareto1.5 | pareto2 | weibull0.4 | lognormal2
"""
import numpy as np, sys
from scipy.optimize import minimize
def draw(rng, fam, n):
    if fam=='pareto1.5': return (1-rng.random(n))**(-1/1.5)
    if fam=='pareto2': return (1-rng.random(n))**(-1/2)
    if fam=='weibull0.4': return rng.weibull(0.4,n)
    if fam=='lognormal2': return rng.lognormal(0,2,n)
def km(t, e):
    o=np.argsort(t,kind='stable'); t=t[o]; e=e[o]; n=len(t)
    risk=n-np.arange(n)
    s=np.cumprod(1-e/risk)
    return t, s, risk
def run(fam,b,N,seed,K,R=50):
    rng=np.random.default_rng(seed)
    big=draw(rng,fam,4_000_000); d=np.quantile(big,1-b); true999=np.quantile(big,0.999)
    P=draw(rng,fam,N); H=draw(rng,fam,N)
    hedged=P>d; cancel=d+H
    cens=hedged&(cancel<P)
    t=np.where(cens,cancel,P); e=(~cens).astype(float)
    ts,s,risk=km(t,e)
    # KM estimate of p99.9 (plain)
    idx=np.searchsorted(-s,-0.001)  # first where s<=0.001
    kmq=ts[min(idx,len(ts)-1)]
    vi=np.max(np.nonzero(risk>=R)[0]); v=ts[vi]; Sv=s[vi]
    ui=np.searchsorted(-s,-K*Sv); u=ts[ui]; Su=s[ui]
    m=t>u; x=t[m]-u; ev=e[m]
    def nll(p):
        xi,ls=p; sg=np.exp(ls)
        z=1+xi*x/sg
        if np.any(z<=0): return 1e18
        if abs(xi)<1e-9: logS=-x/sg
        else: logS=-np.log(z)/xi
        logf=-ls-(1/xi+1)*np.log(z) if abs(xi)>1e-9 else -ls-x/sg
        return -(np.sum(ev*logf)+np.sum((1-ev)*logS))
    r=minimize(nll,[0.3,np.log(np.mean(x)+1e-9)],method='Nelder-Mead')
    xi,ls=r.x; sg=np.exp(ls)
    pc=0.001/Su
    q=u+sg/xi*(pc**(-xi)-1)
    return kmq/true999, q/true999, xi, int(ev.sum()), m.sum()
fam=sys.argv[1]; b=float(sys.argv[2]); N=int(sys.argv[3])
for seed in range(int(sys.argv[4])):
    print(fam,b,seed,["%.3f"%v if isinstance(v,float) else int(v) for v in run(fam,b,N,seed,float(sys.argv[5]))])
