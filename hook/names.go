package hook

// Every name and label the hook writes is made here, so that two Monocles in
// one namespace never share one (TestTwoInstancesStayApart).

const (
	// Group, version and kind of the parent, as the CRD in crd/ declares them.
	Group   = "monocle.monocle.change-metrics.io"
	Version = "v1alpha1"
	Kind    = "Monocle"

	// MaxNameLength bounds a Monocle's name so that its longest child name,
	// the update-idents Job (N + "-update-idents-" + 10 hex digits), stays a
	// 63-character label value (the Job controller copies it into job-name).
	// The CRD's CEL rule on metadata.name holds the same number.
	MaxNameLength = 63 - len("-update-idents-") - identsHashLength

	identsHashLength = 10
	configHashLength = 10

	componentElastic      = "elastic"
	componentAPI          = "api"
	componentCrawler      = "crawler"
	componentUpdateIdents = "update-idents"
	componentSnapshots    = "snapshots"

	// annotationSecretHash on pod templates rolls the pods when a Secret in
	// their environment changes: Monocle reads its environment only at start.
	// (A config change rolls them too: the mounted ConfigMap is named by the
	// config's hash. Monocle 1.11.2 would reload an edited file on its mtime,
	// but a mounted copy the kubelet edits in place is exactly the path by
	// which an unvalidated config would reach running pods.)
	annotationSecretHash = Group + "/secret-hash"

	// lastAppliedAnnotation is where Metacontroller's default (three-way
	// merge) apply keeps what the hook last answered for a child.
	lastAppliedAnnotation = "metacontroller.k8s.io/last-applied-configuration"

	configFile = "config.yaml"
	configDir  = "/etc/monocle"
	apiKeyName = "CRAWLERS_API_KEY"
	// jwkKeyName is the key every API replica signs logins with; without
	// it each process draws its own (src/Monocle/Main.hs).
	jwkKeyName  = "MONOCLE_JWK_GEN_KEY"
	apiPort     = 8080
	crawlerPort = 9001
	elasticPort = 9200
	// uid and gid of the Monocle and Elasticsearch images' own user.
	imageUser = 1000
)

// names holds the name of every child of one Monocle.
type names struct {
	instance string
	api      string // Secret, ConfigMap, Service and Deployment of the API
	elastic  string // StatefulSet and Service of Elasticsearch
	crawler  string
	// snapshots is the CronJob of Elasticsearch's snapshots; its Jobs are
	// N-snapshots-<8 digits>, 19 characters more than N at most.
	snapshots string
}

func namesFor(instance string) names {
	return names{
		instance:  instance,
		api:       instance + "-api",
		elastic:   instance + "-elastic",
		crawler:   instance + "-crawler",
		snapshots: instance + "-snapshots",
	}
}

// mountedConfig is the immutable ConfigMap holding a validated config.yaml,
// named by its hash: the only config the pods mount.
func (n names) mountedConfig(configHash string) string {
	return n.mountedConfigPrefix() + configHash
}

func (n names) mountedConfigPrefix() string { return n.instance + "-config-" }

func (n names) updateIdentsJob(identsHash string) string {
	return n.instance + "-update-idents-" + identsHash
}

// dataClaim is the PVC the StatefulSet's volumeClaimTemplate "data" makes.
func (n names) dataClaim() string { return "data-" + n.elastic + "-0" }

// snapshotsClaim is the PVC the StatefulSet's volumeClaimTemplate
// "snapshots" makes.
func (n names) snapshotsClaim() string { return snapshotsVolume + "-" + n.elastic + "-0" }

func (n names) updateIdentsPrefix() string { return n.instance + "-update-idents-" }

// selector is what a workload selects and a Service routes to: it names the
// instance, so that two Monocles in one namespace never select each other.
func (n names) selector(component string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "monocle",
		"app.kubernetes.io/instance":  n.instance,
		"app.kubernetes.io/component": component,
	}
}

// labels go on every child and pod template: the selector plus managed-by.
func (n names) labels(component string) map[string]string {
	l := n.selector(component)
	l["app.kubernetes.io/managed-by"] = "monocle-hook"
	return l
}
