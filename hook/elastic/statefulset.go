package elastic

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-hook/hook/child"
	"github.com/change-metrics/monocle-hook/hook/wire"
	"github.com/change-metrics/monocle-hook/internal/instance"
	"github.com/change-metrics/monocle-hook/internal/snapshot"
)

// makeStatefulSet builds Elasticsearch. observed, when not nil, is the
// StatefulSet as it exists: its immutable fields (selector, serviceName,
// volumeClaimTemplates) are answered as they are, whatever the spec says now.
// retain forces the Retain policy on the volumes, whatever the spec says.
// dataVolume, when not nil, is the data volume a new StatefulSet mounts
// again (see dataClaimFor).
// A new one has the snapshots template when snapshots are on; one that has
// it mounts it and gives Elasticsearch its path.repo, snapshots on or off,
// so that the snapshots taken stay readable (and restorable) and turning
// snapshots off restarts nothing.
func makeStatefulSet(n instance.Names, s Settings, observed *appsv1.StatefulSet, retain bool, dataVolume *corev1.PersistentVolumeClaim) *appsv1.StatefulSet {
	whenDeleted := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if s.deleteData && !retain {
		whenDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	}
	templates := []corev1.PersistentVolumeClaim{dataClaimFor(s, dataVolume)}
	if s.snapshots != nil {
		templates = append(templates, volumeClaimTemplate(instance.SnapshotsVolume, s.snapshots.size, s.snapshots.class))
	}
	selector, serviceName := &metav1.LabelSelector{MatchLabels: n.Selector(child.ComponentElastic)}, n.Elastic
	if observed != nil {
		selector, serviceName, templates = observed.Spec.Selector, observed.Spec.ServiceName, observed.Spec.VolumeClaimTemplates
	}
	c := elasticContainer(s, claimTemplate(templates, instance.SnapshotsVolume) != nil)
	pod := withElasticUsers(n, child.PodSpec(s.scheduling, c), s.image)
	return &appsv1.StatefulSet{
		TypeMeta:   wire.TypeStatefulSet,
		ObjectMeta: metav1.ObjectMeta{Name: n.Elastic, Labels: n.Labels(child.ComponentElastic)},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To(int32(1)),
			ServiceName: serviceName,
			// Set, not left empty: an empty struct in a server-side apply
			// would own the field but none of what the server defaults in it.
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Selector:       selector,
			// Retain unless asked: the data outlives the Monocle.
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: whenDeleted,
				WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			},
			Template:             child.Template(n.Labels(child.ComponentElastic), pod),
			VolumeClaimTemplates: templates,
		},
	}
}

// elasticContainer is Elasticsearch's container: a single node, its users
// the file realm's, ready once it answers the probe user; with the
// snapshots volume, its path.repo.
func elasticContainer(s Settings, snapshotsVolume bool) corev1.Container {
	c := corev1.Container{
		Name:  "elastic",
		Image: s.image,
		Env: []corev1.EnvVar{
			// single-node also skips the bootstrap checks that
			// would need a privileged sysctl init container.
			{Name: "discovery.type", Value: "single-node"},
			// Its users are the file realm's of the Secret N-elastic
			// (users.go).
			{Name: securityEnv, Value: "true"},
			{Name: "ES_JAVA_OPTS", Value: "-Xms" + s.Heap + " -Xmx" + s.Heap},
		},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: instance.ElasticPort}},
		// Ready once the node answers its root (GET /, 200) to the probe
		// user, whose credentials curl reads from a file: the node, not the
		// cluster's health, so a red cluster keeps Elasticsearch in its
		// Service, where the API and a restore still reach it. This is
		// ECK's legacy probe for ES before 8.2 (cloud-on-k8s,
		// pkg/controller/elasticsearch/nodespec/readiness_probe.go: curl
		// 127.0.0.1:9200/ as the probe user, ready on 200); the image has
		// curl.
		ReadinessProbe: &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{
				"curl", "--silent", "--fail", "--output", "/dev/null", "--max-time", "2",
				"--netrc-file", UsersDir + "/" + probeNetrc,
				"http://127.0.0.1:" + strconv.Itoa(instance.ElasticPort) + "/",
			}}},
			TimeoutSeconds: 3, // every 10 s, the API server's default
		},
		Resources: s.Resources,
		VolumeMounts: []corev1.VolumeMount{
			{Name: "data", MountPath: "/usr/share/elasticsearch/data"},
			{Name: elasticConfigVolume, MountPath: elasticConfigDir},
			{Name: elasticUsersVolume, MountPath: UsersDir, ReadOnly: true},
		},
	}
	if snapshotsVolume {
		c.Env = append(c.Env, corev1.EnvVar{Name: "path.repo", Value: snapshot.PathRepo})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: instance.SnapshotsVolume, MountPath: snapshot.PathRepo})
	}
	return c
}
