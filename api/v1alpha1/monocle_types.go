package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Monocle runs one instance of Monocle (https://github.com/change-metrics/monocle), a dashboard of development metrics: Elasticsearch, the API serving the web UI, and the crawler. Its children are named after it (N-api, N-elastic, N-crawler, N-update-idents-<hash>, N-snapshots).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=mon
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule=`self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')`,message=`metadata.name must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter): it names Services`
// +kubebuilder:validation:XValidation:rule=`self.metadata.name.size() <= 38`,message=`metadata.name must be at most 38 characters, so that the N-update-idents-<hash> Job name stays within 63`
// +kubebuilder:printcolumn:name=Ready,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name=Reason,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name=Spec,type=string,JSONPath=`.status.conditions[?(@.type=="SpecApplied")].reason`,description=`SpecApplied's reason: Applied, or the refusal that holds a field of the spec (a running Monocle serves its last applied state meanwhile).`
// +kubebuilder:printcolumn:name=URL,type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name=Message,type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
// +kubebuilder:printcolumn:name=Image,type=string,priority=1,JSONPath=`.status.versions.monocle`,description=`The API's image, observed running once its rollout is complete (while it rolls out, the last complete rollout's).`
type Monocle struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// What the Monocle should be. Every field is optional.
	Spec MonocleSpec `json:"spec,omitempty"`
	// What the Monocle is, as monocle-hook last observed its children.
	Status MonocleStatus `json:"status,omitempty"`
}

// MonocleSpec is what a Monocle should be. The seed operator's fields (monoclePublicURL, storageSize, storageClassName, route) are kept as aliases so that its objects keep working.
type MonocleSpec struct {
	// The URL users open to reach the web UI (MONOCLE_PUBLIC_URL); the UI reports "Network error" when it is wrong. Wins over monoclePublicURL. Without either, it is the ingress's URL, else http://localhost:8090, the address of `kubectl port-forward svc/<name>-api 8090:8080` (not the Service's URL: a browser cannot resolve it). Monocle 1.11.2 serves its UI at the root of a host: a scheme and a host (with a port, if any), with no path, query, fragment or credentials; a trailing slash is dropped.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[^/?#@"\\<\x00-\x20\x7f-\x{10FFFF}]+/*$`
	PublicURL string `json:"publicURL,omitempty"`
	// The seed operator's name for publicURL, kept so its objects keep working. publicURL wins when both are set.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[^/?#@"\\<\x00-\x20\x7f-\x{10FFFF}]+/*$`
	MonoclePublicURL string `json:"monoclePublicURL,omitempty"`
	// The Monocle container image, for the API, the crawler and the update-idents Job. Defaults to quay.io/change-metrics/monocle:1.11.2. Changing it rolls the API and the crawler.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[^\s]+$`
	Image string `json:"image,omitempty"`
	// The web UI's title (MONOCLE_WEBAPP_TITLE), any text: Monocle writes it into a JavaScript string of the page, so quotes, backslashes, < and non-ASCII characters reach it as JavaScript escapes (\uXXXX), which the browser shows as they were.
	// +kubebuilder:validation:MaxLength=256
	WebappTitle string `json:"webappTitle,omitempty"`
	// The seed operator's name for elasticsearch.storageSize, which wins over it.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`isQuantity(self) && quantity(self).isGreaterThan(quantity('0'))`,message=`storageSize must be a positive quantity such as 10Gi`
	StorageSize string `json:"storageSize,omitempty"`
	// The seed operator's name for elasticsearch.storageClassName, which wins over it.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`!format.dns1123Subdomain().validate(self).hasValue()`,message=`must be a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'`
	StorageClassName string `json:"storageClassName,omitempty"`
	// The seed operator's OpenShift Route settings. route.host is an alias of ingress.host; labels are accepted and not acted on.
	Route *RouteSpec `json:"route,omitempty"`
	// Elasticsearch, managed by the Monocle (a single-node StatefulSet) or external (url or urlSecretRef).
	Elasticsearch ElasticsearchSpec `json:"elasticsearch,omitempty"`
	// The API and web UI.
	API APISpec `json:"api,omitempty"`
	// The crawler, which fetches changes from the providers the config names.
	Crawler CrawlerSpec `json:"crawler,omitempty"`
	// An Ingress N-api to the API Service. Without publicURL, the public URL is https://<host> with tlsSecretName, else http://<host>.
	Ingress *IngressSpec `json:"ingress,omitempty"`
	// Monocle's config.yaml, inline. Written into the generated ConfigMap N-api, over an admin's edits to it. Without config nor configMapRef, N-api holds workspace demo with no crawlers, and an admin may edit it in place. Whatever its source, the config is checked as Monocle 1.11.2's loader checks it; the pods mount only a copy that passed (an immutable ConfigMap N-config-HASH). A config Monocle would refuse sets SpecApplied=False (ConfigInvalid) and the API, the crawler and their config stay as they are. At most 255 KiB once JSON-escaped (what Metacontroller's last-applied annotation can hold).
	// +kubebuilder:validation:MaxLength=261120
	Config string `json:"config,omitempty"`
	// A ConfigMap of your own, in the Monocle's namespace, whose config.yaml is the config instead of N-api's. It survives the Monocle. Wins over config. An edit to it, once checked, rolls the pods, and an idents edit runs update-idents.
	ConfigMapRef *LocalRef `json:"configMapRef,omitempty"`
	// A Secret of your own with provider tokens (GITHUB_TOKEN, ...), added to the pods' environment after the generated N-api (its keys win). It survives the Monocle, unlike N-api. A change to it rolls the pods.
	SecretRef *LocalRef `json:"secretRef,omitempty"`
	// Node labels every Monocle pod must match.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k.size() <= 317 && !format.qualifiedName().validate(k).hasValue())`,message=`label keys must be qualified names of at most 317 characters`
	NodeSelector map[string]LabelValue `json:"nodeSelector,omitempty"`
	// Tolerations of every Monocle pod, as in a pod's spec.
	// +kubebuilder:validation:MaxItems=16
	Tolerations []Toleration `json:"tolerations,omitempty"`
	// Affinity of every Monocle pod, as in a pod's spec (nodeAffinity, podAffinity, podAntiAffinity), with fewer terms: the same affinity is copied into each workload.
	Affinity *Affinity `json:"affinity,omitempty"`
	// Secrets to pull the images with, for every Monocle pod.
	// +kubebuilder:validation:MaxItems=8
	ImagePullSecrets []LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// Who may reach Elasticsearch. A NetworkPolicy N-elastic admits to Elasticsearch's port only the pods of this Monocle (its API, crawler and Jobs, those the project prints included) and the peers named here; the API's port and the crawler's are left open. It takes a network plugin that enforces NetworkPolicy: without one it changes nothing. With an external Elasticsearch there is none.
	NetworkPolicy *NetworkPolicySpec `json:"networkPolicy,omitempty"`
}

// NetworkPolicySpec is who may reach the Elasticsearch the Monocle runs.
type NetworkPolicySpec struct {
	// Whether to make the NetworkPolicy; true when unset.
	Enabled *bool `json:"enabled,omitempty"`
	// More peers admitted to Elasticsearch's port (9200), as in a NetworkPolicy's ingress rule: e.g. an admin's Kibana. They still need a user of Elasticsearch's own.
	// +kubebuilder:validation:MaxItems=2
	ElasticsearchPeers []NetworkPolicyPeer `json:"elasticsearchPeers,omitempty"`
}

// RouteSpec is the seed operator's OpenShift Route.
type RouteSpec struct {
	// The host name to serve, in lower case and without a port; the same as ingress.host.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Host string `json:"host,omitempty"`
	// Labels the seed operator put on its Route; ignored.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k.size() <= 317)`,message=`label keys must be at most 317 characters`
	Labels map[string]LabelValue `json:"labels,omitempty"`
}

// ElasticsearchSpec is Elasticsearch, run by the Monocle or external.
//
// +kubebuilder:validation:XValidation:rule=`!(has(self.url) && has(self.urlSecretRef))`,message=`set url or urlSecretRef, not both`
type ElasticsearchSpec struct {
	// The Elasticsearch image, 7.x only (Monocle speaks to 7.x). Defaults to docker.elastic.co/elasticsearch/elasticsearch:7.17.26. Changing it rolls only Elasticsearch.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[^\s]+$`
	Image string `json:"image,omitempty"`
	// The size of Elasticsearch's volume (PVC data-<name>-elastic-0), a quantity such as 10Gi (the default); the same as the top-level storageSize, which it wins over. The volume is made with it. To grow it later, raise this value: the SpecApplied condition then gives the one kubectl command that expands the volume (its StorageClass must allow expansion). The hook never rewrites the StatefulSet's volumeClaimTemplates, which cannot change; a smaller size is refused.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`isQuantity(self) && quantity(self).isGreaterThan(quantity('0'))`,message=`storageSize must be a positive quantity such as 10Gi`
	StorageSize string `json:"storageSize,omitempty"`
	// The StorageClass of Elasticsearch's volume; the cluster's default when empty. Read when the volume is made: a later change is refused in SpecApplied.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`!format.dns1123Subdomain().validate(self).hasValue()`,message=`must be a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'`
	StorageClassName string `json:"storageClassName,omitempty"`
	// The JVM heap, such as 512m or 2g. Defaults to half the memory limit of resources; without resources, 512m in 1Gi, and the memory is twice the heap.
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]*[mg]$`
	Heap string `json:"heap,omitempty"`
	// Compute resources of Elasticsearch (requests and limits), as in a container's resources.
	Resources *ResourceRequirements `json:"resources,omitempty"`
	// An external Elasticsearch 7.x: no StatefulSet is made and the API and update-idents use this URL. Monocle 1.11.2 makes its Elasticsearch client with http-client's default manager: plain http only, no TLS, so an https:// URL is refused. As Monocle reads it, a URL without a scheme (es:9200) is http://es:9200; a trailing slash is dropped (Monocle joins its paths with /). Credentials in the URL (http://user:password@host:9200) are sent as basic auth, since http-client applies a URL's user info. Put such a URL in a Secret and use urlSecretRef instead. Switching from managed to external keeps the volume.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^[^\x00-\x20\x7f]+$`
	// +kubebuilder:validation:XValidation:rule=`!self.lowerAscii().startsWith('https://')`,message=`must not be https://: Monocle 1.11 speaks plain HTTP to Elasticsearch (no TLS)`
	URL string `json:"url,omitempty"`
	// A key of a Secret in the Monocle's namespace holding the external URL (it reaches MONOCLE_ELASTIC_URL through secretKeyRef, never the spec). A change to it rolls the pods. A value Monocle would not reach Elasticsearch at (https://, or ending in /, which the pods read as it is) holds the pods as they are (InvalidElasticsearchURL); one without a scheme is read as http://.
	URLSecretRef *SecretKeySelector `json:"urlSecretRef,omitempty"`
	// Delete Elasticsearch's volume, and so all Monocle data, when the Monocle is deleted. Default false: the volume is retained (and reused by a Monocle of the same name). Switching to an external Elasticsearch never deletes it.
	DeleteDataOnDelete bool `json:"deleteDataOnDelete,omitempty"`
	// Snapshots of Monocle's indices on a schedule, kept on a second volume of Elasticsearch (PVC snapshots-<name>-elastic-0, mounted at /usr/share/elasticsearch/snapshots, Elasticsearch's path.repo): a CronJob <name>-snapshots runs `monocle-hook snapshot` in the hook's own image. Only for the Elasticsearch the Monocle runs (refused with url or urlSecretRef). Turning it on for an existing Monocle recreates Elasticsearch's StatefulSet once (one restart of Elasticsearch; its data volume is kept and mounted again). Turning it off removes the CronJob and keeps the volume and its snapshots. The volume is retained with the Monocle unless deleteDataOnDelete. On demand: kubectl monocle backup; restore: kubectl monocle restore.
	Snapshots *SnapshotsSpec `json:"snapshots,omitempty"`
}

// SnapshotsSpec schedules snapshots of Monocle's indices.
type SnapshotsSpec struct {
	// When to take a snapshot, as a CronJob's schedule: five fields ("0 3 * * *") or a descriptor (@daily, @every 12h), in timeZone. TZ= and CRON_TZ= are refused: use timeZone.
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule"`
	// The IANA time zone of schedule, such as Europe/Paris; without it, the controller's own (UTC on most clusters).
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`
	// How many successful snapshots to keep: each run deletes those of its snapshots older than the keep-th newest successful one (an admin's own snapshots in the repository are never deleted).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Keep *int32 `json:"keep"`
	// Suspend the CronJob: no new run starts (the restore procedure sets it). Default false. SnapshotsHealthy is Unknown (Suspended) meanwhile.
	Suspend bool `json:"suspend,omitempty"`
	// The size of the snapshot volume, a quantity; defaults to Elasticsearch's storageSize. Read when the volume is made; to grow it later, raise it and run the command the SpecApplied condition gives.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`isQuantity(self) && quantity(self).isGreaterThan(quantity('0'))`,message=`storageSize must be a positive quantity such as 10Gi`
	StorageSize string `json:"storageSize,omitempty"`
	// The StorageClass of the snapshot volume; the cluster's default when empty. Read when the volume is made: a later change is refused in SpecApplied.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`!format.dns1123Subdomain().validate(self).hasValue()`,message=`must be a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'`
	StorageClassName string `json:"storageClassName,omitempty"`
}

// APISpec is the API and web UI.
type APISpec struct {
	// Number of API pods; default 1.
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`
	// Compute resources of the API (requests and limits), as in a container's resources.
	Resources *ResourceRequirements `json:"resources,omitempty"`
}

// CrawlerSpec is the crawler.
type CrawlerSpec struct {
	// Run the crawler; default true.
	Enabled *bool `json:"enabled,omitempty"`
	// Compute resources of the crawler (requests and limits), as in a container's resources.
	Resources *ResourceRequirements `json:"resources,omitempty"`
}

// IngressSpec is the Ingress to the API.
type IngressSpec struct {
	// The host name to serve.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Host string `json:"host"`
	// The IngressClass; the cluster's default when empty.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`!format.dns1123Subdomain().validate(self).hasValue()`,message=`must be a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'`
	ClassName string `json:"className,omitempty"`
	// A kubernetes.io/tls Secret for the host; serves https.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`!format.dns1123Subdomain().validate(self).hasValue()`,message=`must be a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'`
	TLSSecretName string `json:"tlsSecretName,omitempty"`
	// Annotations for the Ingress (e.g. cert-manager's): at most 32, of at most 16 KiB in all (keys and values).
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule=`self.all(k, !format.qualifiedName().validate(k.lowerAscii()).hasValue())`,message=`annotation keys must be qualified names: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.'`
	// +kubebuilder:validation:XValidation:rule=`self.all(k, k.size() <= 317)`,message=`annotation keys must be at most 317 characters`
	// +kubebuilder:validation:XValidation:rule=`self.map(k, size(bytes(k)) + size(bytes(self[k]))).sum() <= 16384`,message=`annotations must be at most 16 KiB in all (keys and values, in bytes)`
	Annotations map[string]AnnotationValue `json:"annotations,omitempty"`
}

// LocalRef names an object of the Monocle's namespace.
type LocalRef struct {
	// The object's name.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule=`!format.dns1123Subdomain().validate(self).hasValue()`,message=`must be a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'`
	Name string `json:"name"`
}

// AnnotationValue is an annotation's value.
// +kubebuilder:validation:MaxLength=4096
type AnnotationValue string

// MonocleStatus is the Monocle's status as the hook writes it. The three component fields keep the seed operator's names and values.
type MonocleStatus struct {
	// Elasticsearch, "Ready" or "In Progress".
	Elastic string `json:"monocle-elastic,omitempty"`
	// The API and web UI, "Ready" or "In Progress".
	API string `json:"monocle-api,omitempty"`
	// The crawler, "Ready" or "In Progress".
	Crawler string `json:"monocle-crawler,omitempty"`
	// The public URL the API runs with.
	URL string `json:"url,omitempty"`
	// The images observed running: a component's once its rollout is complete, and while it rolls out the one its last complete rollout ran.
	Versions *Versions `json:"versions,omitempty"`
	// Elasticsearch's volume.
	Storage *StorageStatus `json:"storage,omitempty"`
	// The snapshot volume and the snapshot CronJob's last runs.
	Snapshots *SnapshotsStatus `json:"snapshots,omitempty"`
	// The generation of the spec this status was computed for (written by Metacontroller, never by the hook).
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Ready (Elasticsearch, the API and the crawler are ready), Progressing (a component is being created or rolled out), SpecApplied (every spec field is in effect; False names the field that is not), IdentsUpdated (update-idents ran for the config's current idents) and SnapshotsHealthy (a snapshot succeeded since the second-to-last time scheduled; Unknown when snapshots are off or suspended).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions"`
}

// Versions are the images observed running: a component's image once its rollout is complete, and while it rolls out the last complete rollout's.
type Versions struct {
	// The API's image.
	Monocle string `json:"monocle,omitempty"`
	// Elasticsearch's image.
	Elasticsearch string `json:"elasticsearch,omitempty"`
}

// StorageStatus compares the size asked for Elasticsearch's volume with the volume's own.
type StorageStatus struct {
	// The PersistentVolumeClaim's name.
	// +optional
	Claim string `json:"claim"`
	// The size the spec asks for.
	Requested string `json:"requested,omitempty"`
	// The volume's actual capacity.
	Capacity string `json:"capacity,omitempty"`
}

// SnapshotsStatus is the snapshot volume and the snapshot CronJob's last runs, as the CronJob controller records them.
type SnapshotsStatus struct {
	// The snapshot volume's PersistentVolumeClaim, once Elasticsearch has one.
	Claim string `json:"claim,omitempty"`
	// The snapshot volume's actual capacity.
	Capacity string `json:"capacity,omitempty"`
	// When the last snapshot run was scheduled (the CronJob's status).
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// When the last snapshot run succeeded (the CronJob's status).
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`
}
