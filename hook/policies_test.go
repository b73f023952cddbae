package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/change-metrics/monocle-hook/hook/condition"
	"github.com/change-metrics/monocle-hook/hook/elastic"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/restorejob"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

// admits: the NetworkPolicy's rule admits a pod of these labels, in its
// own namespace, to Elasticsearch (its first peer, the Monocle's own pods).
func admits(t *testing.T, np *networkingv1.NetworkPolicy, podLabels map[string]string) bool {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(np.Spec.Ingress[0].From[0].PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	return sel.Matches(labels.Set(podLabels))
}

// Every pod the project builds or prints that talks to Elasticsearch is
// admitted by its Monocle's NetworkPolicy, and none of another Monocle's:
// the API, the update-idents Job, the snapshot CronJob's Jobs (not the crawler),
// the restore Job and the janitor Jobs kubectl monocle creates (the
// latter's golden files); kubectl monocle backup's Jobs are the CronJob's. Elasticsearch's own pods are those it guards.
func TestNetworkPolicyAdmitsOwnPods(t *testing.T) {
	c := newCluster(t, readFixture(t, "sync-v1-new-parent"))
	c.parent = setSpec(t, c.parent, withSpec(t, `{"api":{"replicas":2},"elasticsearch":{"snapshots":{"schedule":"@daily","keep":3}}}`))
	for range 3 {
		c.apply(t, syncJSON(t, c.request(t)))
		c.markReady()
	}
	a := decodeAnswer(t, syncJSON(t, c.request(t)))
	n := instance.For("monocle-sample")
	var np networkingv1.NetworkPolicy
	remarshal(t, a.child("NetworkPolicy", n.Elastic), &np)
	other := networkPolicyOf(t, "other")

	pods := map[string]map[string]string{}
	for _, child := range a.Children {
		kind, name := child["kind"].(string), nestedString(child, "metadata", "name")
		var template corev1.PodTemplateSpec
		switch kind {
		case "Deployment", "StatefulSet", "Job":
			remarshal(t, child["spec"].(map[string]any)["template"], &template)
		case "CronJob":
			var cj batchv1.CronJob
			remarshal(t, child, &cj)
			template = cj.Spec.JobTemplate.Spec.Template
		default:
			continue
		}
		pods[kind+"/"+name] = template.Labels
	}
	restore, err := restorejob.Build(restorejob.Options{Monocle: "monocle-sample", Namespace: "default", Snapshot: "monocle-20261130-030000",
		Repository: snapshot.DefaultRepository, Location: snapshot.DefaultLocation, Image: "ghcr.io/change-metrics/monocle-hook:v0.0.0", Timeout: snapshot.DefaultTimeout})
	if err != nil {
		t.Fatal(err)
	}
	pods["kubectl monocle restore's Job"] = restore.Spec.Template.Labels
	for _, want := range []string{"Deployment/" + n.API, "Deployment/" + n.Crawler, "StatefulSet/" + n.Elastic, "CronJob/" + n.Snapshots} {
		if pods[want] == nil {
			t.Fatalf("no %s in %v", want, a.names())
		}
	}
	// The crawler calls only the API: not admitted.
	if admits(t, &np, pods["Deployment/"+n.Crawler]) {
		t.Errorf("the crawler (%v) is admitted to Elasticsearch", pods["Deployment/"+n.Crawler])
	}
	delete(pods, "Deployment/"+n.Crawler)
	for what, podLabels := range pods {
		if what == "StatefulSet/"+n.Elastic {
			sel, _ := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
			if !sel.Matches(labels.Set(podLabels)) {
				t.Errorf("the NetworkPolicy does not guard Elasticsearch's pods %v", podLabels)
			}
			continue
		}
		if !admits(t, &np, podLabels) {
			t.Errorf("%s (%v) is not admitted to its Elasticsearch", what, podLabels)
		}
		if admits(t, other, podLabels) {
			t.Errorf("%s is admitted to another Monocle's Elasticsearch", what)
		}
	}
	// kubectl monocle janitor's Jobs, for its Monocle team.
	files, _ := filepath.Glob("../internal/janitorjob/testdata/*.yaml")
	janitors := 0
	for _, f := range files {
		if filepath.Base(f) == "objects.yaml" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		job := printedJob(t, b)
		janitors++
		if !admits(t, networkPolicyOf(t, "team"), job.Spec.Template.Labels) {
			t.Errorf("%s: the janitor's Job (%v) is not admitted to its Elasticsearch", f, job.Spec.Template.Labels)
		}
	}
	if janitors == 0 {
		t.Fatal("no janitor Job read")
	}
}

// networkPolicyOf is the NetworkPolicy N-elastic of Monocle name.
func networkPolicyOf(t *testing.T, name string) *networkingv1.NetworkPolicy {
	t.Helper()
	n, s := instance.For(name), elastic.Settings{NetworkPolicy: true}
	users, err := elastic.Users(n, s, wire.Children{}, testEnv().Rand)
	if err != nil {
		t.Fatal(err)
	}
	es, _, err := elastic.Answer("default", n, s, wire.Children{}, nil, users, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return es.NetworkPolicy
}

// printedJob is the Job after a printer's comments.
func printedJob(t *testing.T, printed []byte) batchv1.Job {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(string(printed), "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	var job batchv1.Job
	if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &job); err != nil || job.Kind != "Job" {
		t.Fatalf("not a Job: %v\n%s", err, printed)
	}
	return job
}

// The spec's peers are checked as the API server checks a NetworkPolicy's
// (pkg/apis/networking/validation, ValidateNetworkPolicyPeer and
// ValidateIPBlock), for Monocles stored before the CRD held them.
func TestElasticsearchPeers(t *testing.T) {
	tests := map[string]struct {
		peers string
		field string // "": accepted
	}{
		"pods of a namespace":       {`[{"namespaceSelector":{"matchLabels":{"team":"kibana"}},"podSelector":{"matchLabels":{"app":"kibana"}}}]`, ""},
		"an IP block and an except": {`[{"ipBlock":{"cidr":"10.0.0.0/8","except":["10.1.0.0/16"]}}]`, ""},
		"IPv6":                      {`[{"ipBlock":{"cidr":"2001:db8::/32","except":["2001:db8:1::/48"]}}]`, ""},
		"two kinds":                 {`[{"ipBlock":{"cidr":"10.0.0.0/8"},"podSelector":{}}]`, "spec.networkPolicy.elasticsearchPeers[0]"},
		"no kind":                   {`[{}]`, "spec.networkPolicy.elasticsearchPeers[0]"},
		"not a CIDR":                {`[{"ipBlock":{"cidr":"10.0.0.1"}}]`, "spec.networkPolicy.elasticsearchPeers[0].ipBlock.cidr"},
		"except outside":            {`[{"ipBlock":{"cidr":"10.0.0.0/8","except":["192.168.0.0/16"]}}]`, "spec.networkPolicy.elasticsearchPeers[0].ipBlock.except[0]"},
		"except the whole block":    {`[{"ipBlock":{"cidr":"10.0.0.0/8","except":["10.0.0.0/8"]}}]`, "spec.networkPolicy.elasticsearchPeers[0].ipBlock.except[0]"},
		"except of another family":  {`[{"ipBlock":{"cidr":"10.0.0.0/8","except":["::/64"]}}]`, "spec.networkPolicy.elasticsearchPeers[0].ipBlock.except[0]"},
		"a bad label key":           {`[{"podSelector":{"matchLabels":{"bad key":"x"}}}]`, "spec.networkPolicy.elasticsearchPeers[0].podSelector.matchLabels"},
		"In without values":         {`[{"namespaceSelector":{"matchExpressions":[{"key":"team","operator":"In"}]}}]`, "spec.networkPolicy.elasticsearchPeers[0].namespaceSelector.matchExpressions[0].values"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := resolveSpec(json.RawMessage(withSpec(t, `{"networkPolicy":{"elasticsearchPeers":`+tc.peers+`}}`)))
			switch {
			case tc.field == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.field == "" && (len(s.elastic.Peers) != 1 || !s.elastic.NetworkPolicy):
				t.Errorf("peers %+v", s.elastic.Peers)
			case tc.field != "" && (err == nil || err.Reason != condition.ReasonInvalidSpec || !strings.HasPrefix(err.Error(), tc.field)):
				t.Errorf("%v, want InvalidSpec naming %s", err, tc.field)
			}
		})
	}
}
