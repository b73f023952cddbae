package condition

import "slices"

// Reasons of a Monocle's conditions: every reason the hook gives is one of
// these constants, with its line in Reasons.
const (
	// Ready.
	ReasonAllComponentsReady = "AllComponentsReady"
	ReasonComponentsNotReady = "ComponentsNotReady"
	// ReasonRestoring: kubectl monocle restore's record is on the Monocle
	// (internal/restorerecord).
	ReasonRestoring = "Restoring"

	// Progressing.
	ReasonRolloutComplete       = "RolloutComplete"
	ReasonRollingOut            = "RollingOut"
	ReasonRetainingVolume       = "RetainingVolume"
	ReasonRecreatingStatefulSet = "RecreatingStatefulSet"
	// ReasonSecuringElasticsearch: an Elasticsearch made without security
	// (by a release before 0.2.0) keeps running as it is until every
	// client reads its credentials.
	ReasonSecuringElasticsearch = "SecuringElasticsearch"
	// ReasonSpecNotApplied: what waits for the spec is not judged.
	ReasonSpecNotApplied = "SpecNotApplied"

	// SpecApplied. Applied is True; the others are refusals: InvalidSpec
	// holds every child as it was last applied, the others only what they
	// concern, and apply the rest of the spec.
	ReasonApplied = "Applied"
	// ReasonInvalidSpec: the spec does not decode or check.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonConfigInvalid: Monocle would refuse the config at start.
	ReasonConfigInvalid = "ConfigInvalid"
	// ReasonReferenceNotFound: a ConfigMap or Secret the spec names is missing.
	ReasonReferenceNotFound = "ReferenceNotFound"
	// ReasonInvalidElasticsearchURL: Monocle would not reach Elasticsearch
	// at the URL in urlSecretRef (https://, a trailing slash, ...).
	ReasonInvalidElasticsearchURL = "InvalidElasticsearchURL"
	// Elasticsearch's volume: to grow by hand, or a change it cannot take.
	ReasonVolumeExpansionRequired = "VolumeExpansionRequired"
	ReasonStorageShrinkRefused    = "StorageShrinkRefused"
	ReasonImmutableField          = "ImmutableField"
	// ReasonSnapshotsNeedManagedElasticsearch: snapshots are asked of an
	// external Elasticsearch; the rest applies.
	ReasonSnapshotsNeedManagedElasticsearch = "SnapshotsNeedManagedElasticsearch"
	// ReasonCrawlerTokenMissing: the crawler process would exit on a token
	// its pods lack; the crawler Deployment is held (a new one is not made).
	ReasonCrawlerTokenMissing = "CrawlerTokenMissing"
	// ReasonLoginKeyTooShort: MONOCLE_JWK_GEN_KEY is under 64 bytes; the
	// API keeps its running template.
	ReasonLoginKeyTooShort = "LoginKeyTooShort"
	// ReasonLoginSecretMissing: the config enforces login, and the API's
	// pods lack the OIDC client secret (or get it empty): Monocle would
	// serve every workspace with no login. The API keeps its running
	// template; a new Monocle gets no API (nor crawler) until it is there.
	ReasonLoginSecretMissing = "LoginSecretMissing"
	// ReasonAdminTokenEmpty: the config enforces login, and the API's pods
	// get MONOCLE_ADMIN_TOKEN set empty: anyone who sends an empty token
	// gets a login. Held as for LoginSecretMissing.
	ReasonAdminTokenEmpty = "AdminTokenEmpty"
	// ReasonLoginNeedsHTTPS: the config enforces an OIDC login and the
	// public URL is http:// (not loopback): Monocle's session cookies are
	// Secure, browsers drop them, no login sticks. Held as for
	// LoginSecretMissing.
	ReasonLoginNeedsHTTPS = "LoginNeedsHTTPS"
	// ReasonVariableRefused: a Secret in the pods' environment sets a
	// variable that changes how Monocle's processes run (GHCRTS, PATH,
	// LD_*, ...: pods.Environment), or sets the crawlers' key empty. Held
	// as for LoginSecretMissing.
	ReasonVariableRefused = "VariableRefused"

	// IdentsUpdated (and the refusals that hold the pods' config).
	ReasonJobComplete   = "JobComplete"
	ReasonJobFailed     = "JobFailed"
	ReasonJobRunning    = "JobRunning"
	ReasonWaitingForAPI = "WaitingForAPI"

	// SnapshotsHealthy.
	ReasonSnapshotSucceeded  = "SnapshotSucceeded"
	ReasonNoRecentSnapshot   = "NoRecentSnapshot"
	ReasonNoRunDueYet        = "NoRunDueYet"
	ReasonCronJobPending     = "CronJobPending"
	ReasonSuspended          = "Suspended"
	ReasonScheduleUnreadable = "ScheduleUnreadable"
	ReasonSnapshotsOff       = "SnapshotsOff"
)

// Reason is a reason's line: the conditions it is given with, each as
// Type=Status, and what it means to whoever reads the status.
type Reason struct {
	Name  string
	In    []string
	Means string
}

// The Type=Status pairs of Reasons.
const (
	readyTrue, readyFalse               = ConditionReady + "=True", ConditionReady + "=False"
	progressingTrue, progressingFalse   = ConditionProgressing + "=True", ConditionProgressing + "=False"
	specTrue, specFalse                 = ConditionSpecApplied + "=True", ConditionSpecApplied + "=False"
	identsTrue, identsFalse, identsNone = ConditionIdentsUpdated + "=True", ConditionIdentsUpdated + "=False", ConditionIdentsUpdated + "=Unknown"
	snapsTrue, snapsFalse, snapsNone    = ConditionSnapshotsHealthy + "=True", ConditionSnapshotsHealthy + "=False", ConditionSnapshotsHealthy + "=Unknown"
)

// Reasons is every reason's line, the one table docs/status.md, the
// plugin's explanations and the runbooks are checked against.
var Reasons = []Reason{
	{ReasonAllComponentsReady, []string{readyTrue}, "Elasticsearch, the API and the crawler are ready (a running Monocle whose edit is refused stays ready: it serves its last applied state)"},
	{ReasonComponentsNotReady, []string{readyFalse}, "a component is rolling out or has stopped being ready: the message names those waited for"},
	{ReasonRestoring, []string{readyFalse}, "kubectl monocle restore is restoring a snapshot into this Monocle: the API and the crawler are stopped until it ends; the message says its step"},
	{ReasonRolloutComplete, []string{progressingFalse}, "every component runs its latest template"},
	{ReasonRollingOut, []string{progressingTrue}, "a component is being created or rolled out: the message names it"},
	{ReasonRetainingVolume, []string{progressingTrue}, "Elasticsearch's volumes are set to Retain before its StatefulSet is removed or made anew"},
	{ReasonRecreatingStatefulSet, []string{progressingTrue}, "Elasticsearch's StatefulSet is made anew with the snapshot volume (its volumes are kept and mounted again)"},
	{ReasonSecuringElasticsearch, []string{progressingTrue}, "Elasticsearch runs without security (made by a release before 0.2.0): its StatefulSet keeps its pods' template (no restart) until every client of it reads its credentials and the API's rollout is complete; the message names the clients waited for"},
	{ReasonSpecNotApplied, []string{progressingFalse, identsNone, snapsNone}, "the spec is not applied (SpecApplied says why): what it holds does not roll, and what it would run is not judged"},
	{ReasonApplied, []string{specTrue}, "every spec field is in effect (the message notes unwise values)"},
	{ReasonInvalidSpec, []string{specFalse, readyFalse}, "a spec value is refused (its schema, a child's API, a bound): every child is held as last applied, nothing is created, deleted or rolled"},
	{ReasonConfigInvalid, []string{specFalse, readyFalse, identsFalse}, "Monocle would refuse the config at start: the API, the crawler, their config and Jobs are held as last applied (a new Monocle gets no API nor crawler); the rest applies"},
	{ReasonReferenceNotFound, []string{specFalse, readyFalse, identsFalse}, "a ConfigMap or Secret the spec names does not exist: the API, the crawler (and, for a ConfigMap, their config and Jobs) are held as they run (a new Monocle gets no API nor crawler); the rest applies"},
	{ReasonInvalidElasticsearchURL, []string{specFalse, readyFalse, identsFalse}, "Monocle would not reach Elasticsearch at the URL in elasticsearch.urlSecretRef (https://, a trailing /, an upper-case scheme): held as for ConfigInvalid"},
	{ReasonVolumeExpansionRequired, []string{specFalse}, "spec.elasticsearch.storageSize grew: the message prints the command that expands the volume; its size is kept until then"},
	{ReasonStorageShrinkRefused, []string{specFalse}, "a volume cannot shrink: its size is kept; the rest applies"},
	{ReasonImmutableField, []string{specFalse}, "a volume's StorageClass cannot change: it is kept; the rest applies"},
	{ReasonSnapshotsNeedManagedElasticsearch, []string{specFalse, snapsNone}, "snapshots are for the Elasticsearch the Monocle runs: no snapshot is taken of an external one; the rest applies"},
	{ReasonCrawlerTokenMissing, []string{specFalse, readyFalse}, "a crawler's token is in no Secret the pods read, and Monocle's crawler would exit on it: the crawler is held (a new Monocle gets none); the rest applies"},
	{ReasonLoginKeyTooShort, []string{specFalse, readyFalse}, "MONOCLE_JWK_GEN_KEY is under 64 bytes and the API signs with it: a running API and the crawler are held (a new API is made); the rest applies"},
	{ReasonLoginSecretMissing, []string{specFalse, readyFalse}, "the config enforces login and the API's pods lack the OIDC client secret, or get it empty: the API and the crawler are held (a new Monocle gets neither); the rest applies"},
	{ReasonAdminTokenEmpty, []string{specFalse, readyFalse}, "the config enforces login and MONOCLE_ADMIN_TOKEN is set empty: held as for LoginSecretMissing"},
	{ReasonLoginNeedsHTTPS, []string{specFalse, readyFalse}, "the config enforces an OIDC login and the public URL is http://: Monocle's session cookies are Secure, so browsers drop them and no login sticks; held as for LoginSecretMissing"},
	{ReasonVariableRefused, []string{specFalse, readyFalse}, "a Secret in the pods' environment sets a variable that changes how Monocle's processes run, or the crawlers' key empty: held as for LoginSecretMissing"},
	{ReasonJobComplete, []string{identsTrue}, "update-idents completed for the config's current idents"},
	{ReasonJobFailed, []string{identsFalse}, "update-idents failed for the current idents: it runs again when they change or when its Job is deleted"},
	{ReasonJobRunning, []string{identsNone}, "update-idents is running for the current idents"},
	{ReasonWaitingForAPI, []string{identsNone}, "update-idents starts once the API runs this config and is ready (it creates the indices the Job updates)"},
	{ReasonSnapshotSucceeded, []string{snapsTrue}, "a snapshot succeeded since the second-to-last time the schedule fired"},
	{ReasonNoRecentSnapshot, []string{snapsFalse}, "no snapshot succeeded since the second-to-last time the schedule fired: see the snapshot Jobs' logs"},
	{ReasonNoRunDueYet, []string{snapsNone}, "the snapshot CronJob is too young to have missed a run"},
	{ReasonCronJobPending, []string{snapsNone}, "the snapshot CronJob is not there yet: it comes with Elasticsearch's snapshot volume"},
	{ReasonSuspended, []string{snapsNone}, "snapshots are suspended (spec.elasticsearch.snapshots.suspend)"},
	{ReasonScheduleUnreadable, []string{snapsNone}, "the snapshot CronJob's schedule cannot be read: the message quotes it"},
	{ReasonSnapshotsOff, []string{snapsNone}, "spec.elasticsearch.snapshots is not set: no snapshot is taken"},
}

// Explain is what reason means, "" for a reason this version never gives.
func Explain(reason string) string {
	if i := slices.IndexFunc(Reasons, func(r Reason) bool { return r.Name == reason }); i >= 0 {
		return Reasons[i].Means
	}
	return ""
}

// Given reports whether reason is given with a condition of type t and
// status s.
func Given(reason, t, s string) bool {
	i := slices.IndexFunc(Reasons, func(r Reason) bool { return r.Name == reason })
	return i >= 0 && slices.Contains(Reasons[i].In, t+"="+s)
}
