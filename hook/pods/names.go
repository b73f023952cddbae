package pods

import "github.com/change-metrics/monocle-hook/internal/instance"

// The pods' own names and keys; the rest come from internal/instance.
const (
	// annotationSecretHash on pod templates rolls the pods when a Secret in
	// their environment changes: Monocle reads its environment only at start.
	// (A config change rolls them too: the mounted ConfigMap is named by the
	// config's hash. Monocle 1.11.2 would reload an edited file on its mtime,
	// but a mounted copy the kubelet edits in place is exactly the path by
	// which an unvalidated config would reach running pods.)
	annotationSecretHash = instance.Group + "/secret-hash"

	configFile = instance.ConfigFile
	configDir  = "/etc/monocle"
	apiKeyName = "CRAWLERS_API_KEY"
	// jwkKeyName is the key every API replica signs logins with; without
	// it each process draws its own (src/Monocle/Main.hs).
	jwkKeyName  = "MONOCLE_JWK_GEN_KEY"
	crawlerPort = 9001
)
