// Package instance is what every object of one Monocle shares: the names
// and labels of its children, and the pods they run, restricted. The hook
// builds its children with it, and so does kubectl monocle the Jobs it
// creates (restore, janitor), so that they name and run the same.
// It imports nothing of the project: every part of it may use it.
package instance

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// ImageRepository is where the hook's image is published; its tag is the
// hook's version.
const ImageRepository = "ghcr.io/change-metrics/monocle-hook"

const (
	// Group, version and kind of a Monocle, as api/v1alpha1 declares them.
	Group   = "monocle.monocle.change-metrics.io"
	Version = "v1alpha1"
	Kind    = "Monocle"

	// ConfigHashLength is the length of the config's hash in the mounted
	// ConfigMap's name.
	ConfigHashLength = 10
	// IdentsHashLength is the length of the idents' hash in the
	// update-idents Job's name.
	IdentsHashLength = 10
	// MaxNameLength bounds a Monocle's name so that its longest child name,
	// the update-idents Job (N + "-update-idents-" + the hash), stays a
	// 63-character label value (the Job controller copies it into job-name).
	// The CRD's CEL rule on metadata.name holds the same number.
	MaxNameLength = 63 - len("-update-idents-") - IdentsHashLength

	// ElasticPort is Elasticsearch's HTTP port, on its Service too.
	ElasticPort = 9200
	// APIPort is the API's, on its Service too.
	APIPort = 8080

	// ConfigFile is config.yaml's key in the ConfigMaps that hold it.
	ConfigFile = "config.yaml"

	// ImageUser is the uid and gid of the Monocle and Elasticsearch images'
	// own user; HookImageUser is the hook image's (distroless nonroot).
	ImageUser     = 1000
	HookImageUser = 65532

	// SnapshotsVolume is the StatefulSet's volumeClaimTemplate for the
	// snapshots, and the prefix of its claims.
	SnapshotsVolume = "snapshots"
)

// Names are the names of one Monocle's children.
type Names struct {
	Instance string
	API      string // Secret, ConfigMap, Service and Deployment of the API
	Elastic  string // StatefulSet and Service of Elasticsearch
	Crawler  string
	// Snapshots is the CronJob of Elasticsearch's snapshots; its Jobs are
	// N-snapshots-<8 digits>, 19 characters more than N at most.
	Snapshots string
}

// For is the names of Monocle instance's children.
func For(instance string) Names {
	return Names{
		Instance:  instance,
		API:       instance + "-api",
		Elastic:   instance + "-elastic",
		Crawler:   instance + "-crawler",
		Snapshots: instance + "-snapshots",
	}
}

// MountedConfig is the immutable ConfigMap holding a validated config.yaml,
// named by its hash: the only config the pods mount.
func (n Names) MountedConfig(configHash string) string {
	return n.MountedConfigPrefix() + configHash
}

func (n Names) MountedConfigPrefix() string { return n.Instance + "-config-" }

func (n Names) UpdateIdentsJob(identsHash string) string {
	return n.UpdateIdentsPrefix() + identsHash
}

func (n Names) UpdateIdentsPrefix() string { return n.Instance + "-update-idents-" }

// DataClaim is the PVC the StatefulSet's volumeClaimTemplate "data" makes.
func (n Names) DataClaim() string { return "data-" + n.Elastic + "-0" }

// SnapshotsClaim is the PVC the StatefulSet's volumeClaimTemplate
// "snapshots" makes.
func (n Names) SnapshotsClaim() string { return SnapshotsVolume + "-" + n.Elastic + "-0" }

// ElasticURL is Elasticsearch's, through its Service.
func (n Names) ElasticURL() string { return "http://" + n.Elastic + ":" + strconv.Itoa(ElasticPort) }

// APIURL is the API's, through its Service.
func (n Names) APIURL() string { return "http://" + n.API + ":" + strconv.Itoa(APIPort) }

// Selector is what a workload selects and a Service routes to: it names the
// instance, so that two Monocles in one namespace never select each other.
func (n Names) Selector(component string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "monocle",
		"app.kubernetes.io/instance":  n.Instance,
		"app.kubernetes.io/component": component,
	}
}

// Labels go on every child and pod template: the selector plus managed-by.
func (n Names) Labels(component string) map[string]string {
	l := n.Selector(component)
	l["app.kubernetes.io/managed-by"] = "monocle-hook"
	return l
}

// Resources requests cpu and memory and limits memory only: a CPU limit
// would throttle Elasticsearch's and Monocle's start for nothing.
func Resources(cpu, memory, memoryLimit string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(cpu),
			corev1.ResourceMemory: resource.MustParse(memory),
		},
		Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memoryLimit)},
	}
}

// RestrictedPod wraps one container in a pod that meets the restricted Pod
// Security Standard, running as user uid. None of a Monocle's pods calls
// the Kubernetes API: no token of the namespace's default ServiceAccount in
// pods that run images the Monocle's author chose.
func RestrictedPod(c corev1.Container, uid int64) corev1.PodSpec {
	c.SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	return corev1.PodSpec{
		Containers:                   []corev1.Container{c},
		AutomountServiceAccountToken: ptr.To(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To(uid),
			RunAsGroup:     ptr.To(uid),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
}

// HookJobPod is the pod of a Job that runs the hook's own image (a
// snapshot, a restore): run once, with nothing to write and no volume.
func HookJobPod(c corev1.Container) corev1.PodSpec {
	pod := RestrictedPod(c, HookImageUser)
	pod.RestartPolicy = corev1.RestartPolicyNever
	pod.Containers[0].SecurityContext.ReadOnlyRootFilesystem = ptr.To(true)
	return pod
}

// The API's Elasticsearch proxy (hook/pods/elasticproxy.go): its sidecar
// container, and the loopback URL the API is given instead of the URL
// with credentials.
const (
	ElasticProxyContainer = "elastic-proxy"
	ElasticProxyListen    = "127.0.0.1:9200"
	ElasticProxyURL       = "http://" + ElasticProxyListen
)

// ElasticProxyURLRef is the Secret key the Elasticsearch proxy of pod reads
// its URL from, as hook/pods runs it: a native sidecar (an init container
// that keeps running) of that name, whose MONOCLE_ELASTIC_URL is a Secret's
// key. Of repeated variables the last is the one a process sees (the
// kubelet's rule). Nil when pod runs no such proxy.
func ElasticProxyURLRef(pod *corev1.PodSpec) *corev1.SecretKeySelector {
	for _, c := range pod.InitContainers {
		if c.Name != ElasticProxyContainer || c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			continue
		}
		var ref *corev1.SecretKeySelector
		for _, e := range c.Env {
			if e.Name == "MONOCLE_ELASTIC_URL" {
				ref = nil
				if e.ValueFrom != nil {
					ref = e.ValueFrom.SecretKeyRef
				}
			}
		}
		return ref
	}
	return nil
}
