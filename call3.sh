export ZEROGNN_GIT_COMMIT=55d61ffe4f3d2fa7f15f11772de5ea4f35122840 ZEROGNN_GIT_DIRTY=0
source scripts/install_wheels.sh
cat /proc/sys/kernel/random/boot_id
zerognn dataset make products-like --out data/products-like > /dev/null 2>&1
zerognn build --arch auto > /dev/null 2>&1
for dt in float32 tf32 bfloat16; do for b in 256 1024; do for v in zerognn host-mediated; do
  o=results/prec/$v-$dt-b$b
  timeout 60 zerognn run --dataset products-like --dataset-dir data/products-like --variant $v --batch-size $b --fanouts 15,10,5 --dtype $dt --out $o/ --trace $o.trace.json.gz > /dev/null 2>&1
  python3 -c "import json,glob; r=json.load(open(glob.glob('$o/*.json')[0])); m=r['metrics']; print('$v $dt B=$b', round(m['step_ms_median'],3), 'floor', round(m['floor_ms'],3), 'act', m['gpu_activities_per_step'], {k: round(v,3) for k,v in m['gpu_ms_by_class'].items()})"
done; done; done
tar czf $OUT/prec.tgz results/prec
