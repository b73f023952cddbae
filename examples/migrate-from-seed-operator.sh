#!/usr/bin/env bash
# Moves one Monocle from the seed operator (change-metrics/monocle-operator
# v0.0.x) to monocle-hook, keeping its Elasticsearch data, its Secret (the
# CRAWLERS_API_KEY and any provider token an admin added) and its config.
#
# Before: stop the seed operator (delete its Deployment), apply crd/monocle.yaml
# over its CRD (kubectl apply --server-side --force-conflicts -f crd/monocle.yaml)
# and install monocle-hook, but not yet the CompositeController
# (helm install monocle-hook ./chart -n monocle-hook --create-namespace
# --set compositeController.enabled=false, or kubectl apply -f metacontroller/hook.yaml).
# After: the CompositeController (helm upgrade monocle-hook ./chart -n monocle-hook
# --reset-then-reuse-values --set compositeController.enabled=true, or kubectl
# apply -f metacontroller/compositecontroller.yaml); the hook then creates the
# Monocle's children, and Elasticsearch starts on the old volume.
#
# Usage: migrate-from-seed-operator.sh NAMESPACE NAME
set -euo pipefail
ns=$1 name=$2
k() { kubectl -n "$ns" "$@"; }

uid=$(k get monocle "$name" -o jsonpath='{.metadata.uid}')
old_claim=$name-elastic-data-volume-$name-elastic-0   # the seed's volumeClaimTemplate
new_claim=data-$name-elastic-0                        # monocle-hook's
pv=$(k get pvc "$old_claim" -o jsonpath='{.spec.volumeName}')
size=$(k get pvc "$old_claim" -o jsonpath='{.spec.resources.requests.storage}')
class=$(k get pvc "$old_claim" -o jsonpath='{.spec.storageClassName}')

echo "1. Volume $pv outlives its claim."
kubectl patch pv "$pv" --type merge -p '{"spec":{"persistentVolumeReclaimPolicy":"Retain"}}'

echo "2. The seed's workloads and Services go: their selectors ({app: monocle, tier: ...}) are"
echo "   shared by every instance and immutable, and their names are the hook's."
k delete statefulset "$name-elastic" --ignore-not-found
k delete deployment "$name-api" "$name-crawler" --ignore-not-found
k delete service "$name-api" "$name-elastic" --ignore-not-found
k delete job update-idents-job --ignore-not-found

echo "3. The Secret and the ConfigMap stay: labelled, Metacontroller adopts them (the seed"
echo "   already made the Monocle their controller), and the hook keeps their data."
k label secret "$name-api" "controller-uid=$uid" --overwrite
k label configmap "$name-api" "controller-uid=$uid" --overwrite

echo "4. The volume moves to the claim the hook's StatefulSet mounts."
k delete pvc "$old_claim"
kubectl patch pv "$pv" --type json -p '[{"op":"remove","path":"/spec/claimRef"}]'
k apply -f - <<YAML
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: $new_claim
  labels:
    app.kubernetes.io/name: monocle
    app.kubernetes.io/instance: $name
    app.kubernetes.io/component: elastic
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: "$class"
  volumeName: $pv
  resources:
    requests:
      storage: $size
YAML

echo "5. The Monocle asks for that volume's size and class."
k patch monocle "$name" --type merge -p "{\"spec\":{\"elasticsearch\":{\"storageSize\":\"$size\",\"storageClassName\":\"$class\"}}}"
echo "Done: apply the CompositeController, then watch: kubectl -n $ns get monocle $name -w"
