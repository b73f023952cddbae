{{/* The chart's name, or nameOverride. */}}
{{- define "monocle-hook.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The name of the hook's Deployment, Service, ServiceAccount and
PodDisruptionBudget: the release name if it contains the chart's name (the
release "monocle-hook" gives "monocle-hook"), else <release>-<name>.
*/}}
{{- define "monocle-hook.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "monocle-hook.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Every object's labels. */}}
{{- define "monocle-hook.labels" -}}
helm.sh/chart: {{ include "monocle-hook.chart" . }}
{{ include "monocle-hook.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
What the Service, the PodDisruptionBudget and the spread constraints select;
the Deployment's selector, immutable: never add to it.
*/}}
{{- define "monocle-hook.selectorLabels" -}}
app.kubernetes.io/name: {{ include "monocle-hook.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The helm test Pod's labels, which the NetworkPolicy admits: not the hook's
selector labels (the Service would send it syncs).
*/}}
{{- define "monocle-hook.testLabels" -}}
app.kubernetes.io/name: {{ include "monocle-hook.name" . }}-test
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The hook's image: repository, then :tag (appVersion by default), then @digest if set. */}}
{{- define "monocle-hook.image" -}}
{{- $ref := printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- if .Values.image.digest }}
{{- $ref = printf "%s@%s" $ref .Values.image.digest }}
{{- end }}
{{- $ref }}
{{- end }}

{{/* http, or https when the hook serves TLS. */}}
{{- define "monocle-hook.scheme" -}}
{{- if .Values.tls.secretName }}https{{ else }}http{{ end }}
{{- end }}

{{/*
A CompositeController webhook calling the hook's Service at .path:
include "monocle-hook.webhook" (dict "root" $ "path" "/sync").
*/}}
{{- define "monocle-hook.webhook" -}}
{{- $root := .root -}}
service:
  name: {{ include "monocle-hook.fullname" $root }}
  namespace: {{ $root.Release.Namespace }}
  port: {{ $root.Values.service.port }}
  protocol: {{ include "monocle-hook.scheme" $root }}
path: {{ .path }}
timeout: {{ $root.Values.compositeController.hookTimeout }}
{{- with $root.Values.tls.caBundle }}
# The CA that signed the hook's certificate (tls.caBundle).
caBundle:
  inline: |
    {{- . | trim | nindent 4 }}
{{- end }}
{{- end }}

{{/* Where the TLS Secret is mounted in the hook's container. */}}
{{- define "monocle-hook.tlsDir" -}}
/etc/monocle-hook/tls
{{- end }}

{{/*
Cross-field checks the values schema cannot express, then Metacontroller's
API; rendered (as nothing) by every template that depends on them, so any
render fails early.
*/}}
{{- define "monocle-hook.validate" -}}
{{- if and .Values.tls.caBundle (not .Values.tls.secretName) }}
{{- include "monocle-hook.fail" "tls.caBundle is set but tls.secretName is not: the hook only serves TLS with a certificate (tls.secretName)" }}
{{- end }}
{{- $drain := add .Values.preStopSleepSeconds .Values.shutdownTimeoutSeconds }}
{{- if le (int .Values.terminationGracePeriodSeconds) (int $drain) }}
{{- include "monocle-hook.fail" (printf "terminationGracePeriodSeconds (%v) must be more than preStopSleepSeconds + shutdownTimeoutSeconds (%v): the kubelet would kill the hook while in-flight syncs finish" .Values.terminationGracePeriodSeconds $drain) }}
{{- end }}
{{- include "monocle-hook.checkMetacontroller" . }}
{{- end }}

{{/*
fail for values no render may take, under helm lint too. helm lint's fail
only logs the message (as INFO) and returns, and lint then passes: an
include of a template that does not exist (named by the message) is an error
lint reports, and fails on. Under helm template and install, fail stops
first, with the message alone.
*/}}
{{- define "monocle-hook.fail" -}}
{{- fail . }}
{{- include (printf "values refused: %s" .) . }}
{{- end }}

{{/*
Without Metacontroller's API the CompositeController cannot be created:
stop before anything is, with one line that says what to do. Helm has
already installed crds/ (the Monocle CRD) by then; that is harmless. A
plain fail: helm lint asks no cluster, so under lint the message is logged
(INFO, with --debug) and everything renders, to be linted as installed.
*/}}
{{- define "monocle-hook.checkMetacontroller" -}}
{{- if and .Values.capabilityChecks (not (.Capabilities.APIVersions.Has "metacontroller.k8s.io/v1alpha1/CompositeController")) }}
{{- fail (printf "Metacontroller's API (CompositeController, metacontroller.k8s.io/v1alpha1) is not served by this cluster: install Metacontroller v4.17 or later first, e.g. with the values this chart carries in files/: `helm pull oci://ghcr.io/change-metrics/charts/monocle-hook --version %s --untar` then `helm install metacontroller oci://ghcr.io/metacontroller/metacontroller-helm --version 4.17.2 -n metacontroller --create-namespace -f monocle-hook/files/metacontroller-values.yaml` (docs/install.md in monocle-hook's repository), then run this again. Helm installs crds/ before this check, so the Monocle CRD may already exist: that is harmless. Rendering without a cluster (helm template)? Set capabilityChecks=false." .Chart.Version) }}
{{- end }}
{{- end }}

{{/*
"true" when the chart may render an object of an API another project
serves (Prometheus Operator's): the cluster serves it, or capabilityChecks
is off. include "monocle-hook.served" (list $ "monitoring.coreos.com/v1/ServiceMonitor")
*/}}
{{- define "monocle-hook.served" -}}
{{- $root := index . 0 }}
{{- if or (not $root.Values.capabilityChecks) ($root.Capabilities.APIVersions.Has (index . 1)) }}true{{ end }}
{{- end }}

{{/* The hook's ServiceAccount: made by the chart, or one that exists. */}}
{{- define "monocle-hook.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "monocle-hook.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}
