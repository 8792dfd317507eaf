"""Ranking quality on LightGBM's lambdarank example (../shared/data/lightgbm_examples/
lambdarank): NDCG@1/3/5/10 on its test queries of boostwood and LightGBM ``lambdarank``
and XGBoost ``rank:ndcg`` (top 30) at matched settings, 40 seeds (feature and row
sampling draw differently per seed), by LightGBM's metric rules: mean ± standard error
of the mean over the seeds (the test set has 50 queries, so one seed's NDCG@1 moves by
0.02 per query; 5 seeds are too few to tell the libraries apart).

Usage: ``python benchmarks/bench_rank_example.py [rounds] [seeds]`` (default 100 rounds,
40 seeds).
"""
import os
import sys

import numpy as np
from sklearn.datasets import load_svmlight_file
import boostwood as bw, lightgbm as lgb, xgboost as xgb
from boostwood.boosting.metrics import get_metric
from boostwood.data.queries import queries_from
from boostwood.data.rowinfo import RowInfo
base=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'shared', 'data', 'lightgbm_examples', 'lambdarank') + os.sep
Xtr,ytr=load_svmlight_file(base+'rank.train'); Xte,yte=load_svmlight_file(base+'rank.test', n_features=Xtr.shape[1])
Xtr,Xte=Xtr.toarray(),Xte.toarray()
gtr=np.loadtxt(base+'rank.train.query',dtype=np.int64); gte=np.loadtxt(base+'rank.test.query',dtype=np.int64)
rules={"eval_ties":"input_order","eval_empty_query":"one"}   # LightGBM's own metric rules
info=RowInfo.of(yte, queries=queries_from(len(yte), group=gte))
def ndcgs(pred): return [get_metric(f"ndcg@{k}", rules).evaluate(info, np.asarray(pred,np.float64)) for k in (1,3,5,10)]
R=int(sys.argv[1]) if len(sys.argv)>1 else 100
res={"boostwood":[], "lightgbm":[], "xgboost":[]}
S=int(sys.argv[2]) if len(sys.argv)>2 else 40
for seed in range(S):
    common=dict(eta=0.1, leaves=31, ff=0.8, bag=0.8)
    b=bw.train({"objective":"lambdarank","eta":0.1,"grow_policy":"lossguide","max_leaves":31,"max_depth":0,"min_data_in_leaf":20,"min_child_weight":1e-3,"reg_lambda":0.0,"colsample_bytree":0.8,"subsample":0.8,"seed":seed,"verbosity":0}, bw.Dataset(Xtr,ytr,group=gtr), R)
    res["boostwood"].append(ndcgs(b.predict(Xte)))
    m=lgb.train({"objective":"lambdarank","learning_rate":0.1,"num_leaves":31,"min_data_in_leaf":20,"min_sum_hessian_in_leaf":1e-3,"lambda_l2":0.0,"feature_fraction":0.8,"bagging_fraction":0.8,"bagging_freq":1,"seed":seed,"verbose":-1,"deterministic":True,"force_row_wise":True}, lgb.Dataset(Xtr,ytr,group=gtr), R)
    res["lightgbm"].append(ndcgs(m.predict(Xte)))
    x=xgb.train({"objective":"rank:ndcg","eta":0.1,"tree_method":"hist","grow_policy":"lossguide","max_leaves":31,"max_depth":0,"min_child_weight":1e-3,"reg_lambda":0.0,"colsample_bytree":0.8,"subsample":0.8,"seed":seed,"lambdarank_pair_method":"topk","lambdarank_num_pair_per_sample":30,"nthread":2}, xgb.DMatrix(Xtr,ytr,qid=np.repeat(np.arange(len(gtr)),gtr)), R)
    res["xgboost"].append(ndcgs(x.predict(xgb.DMatrix(Xte))))
print(f"lambdarank example, {R} rounds, {S} seeds (colsample_bytree/feature_fraction 0.8, subsample/bagging 0.8), 31 leaves, eta 0.1; NDCG in input order, empty query = 1 (LightGBM's rules); mean ± standard error over the seeds")
print("| library | NDCG@1 | NDCG@3 | NDCG@5 | NDCG@10 |\n|---|---|---|---|---|")
for lib,v in res.items():
    a=np.array(v); mu=a.mean(0); sd=a.std(0, ddof=1)/np.sqrt(len(a))
    print(f"| {lib} | "+" | ".join(f"{m:.4f} ± {s:.4f}" for m,s in zip(mu,sd))+" |")
