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
Cross-field checks the values schema cannot express; rendered (as nothing)
by every template that depends on them, so any render fails early.
*/}}
{{- define "monocle-hook.validate" -}}
{{- if and .Values.tls.caBundle (not .Values.tls.secretName) }}
{{- fail "tls.caBundle is set but tls.secretName is not: the hook only serves TLS with a certificate (tls.secretName)" }}
{{- end }}
{{- $drain := add .Values.preStopSleepSeconds .Values.shutdownTimeoutSeconds }}
{{- if le (int .Values.terminationGracePeriodSeconds) (int $drain) }}
{{- fail (printf "terminationGracePeriodSeconds (%v) must be more than preStopSleepSeconds + shutdownTimeoutSeconds (%v): the kubelet would kill the hook while in-flight syncs finish" .Values.terminationGracePeriodSeconds $drain) }}
{{- end }}
{{- end }}
