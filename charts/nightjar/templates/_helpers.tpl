{{/* Names, labels and small helpers shared by the templates. */}}

{{- define "nightjar.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "nightjar.fullname" -}}
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

{{/* common labels; pass (dict "ctx" $ "component" "api-server") */}}
{{- define "nightjar.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
{{ include "nightjar.selectorLabels" . }}
{{- end }}

{{- define "nightjar.selectorLabels" -}}
app.kubernetes.io/name: {{ include "nightjar.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* <registry>/<name>:<tag>; pass (dict "ctx" $ "name" .Values.images.apiServer) */}}
{{- define "nightjar.image" -}}
{{- printf "%s/%s:%s" .ctx.Values.images.registry .name (default .ctx.Chart.AppVersion .ctx.Values.images.tag) }}
{{- end }}

{{- define "nightjar.sessionsNamespace" -}}
{{- default .Release.Namespace .Values.sessionsNamespace.name }}
{{- end }}

{{- define "nightjar.apiServer.serviceAccount" -}}
{{- if .Values.apiServer.serviceAccount.create }}{{ default (printf "%s-api-server" (include "nightjar.fullname" .)) .Values.apiServer.serviceAccount.name }}{{ else }}{{ default "default" .Values.apiServer.serviceAccount.name }}{{ end }}
{{- end }}

{{- define "nightjar.operator.serviceAccount" -}}
{{- if .Values.operator.serviceAccount.create }}{{ default (printf "%s-operator" (include "nightjar.fullname" .)) .Values.operator.serviceAccount.name }}{{ else }}{{ default "default" .Values.operator.serviceAccount.name }}{{ end }}
{{- end }}

{{- define "nightjar.browser.serviceAccount" -}}
{{- if .Values.browserPods.serviceAccount.create }}{{ default (printf "%s-browser" (include "nightjar.fullname" .)) .Values.browserPods.serviceAccount.name }}{{ else }}{{ default "default" .Values.browserPods.serviceAccount.name }}{{ end }}
{{- end }}

{{- define "nightjar.cookieSecretName" -}}
{{- default (printf "%s-cookie" (include "nightjar.fullname" .)) .Values.apiServer.cookieSecret.existingSecret }}
{{- end }}

{{- define "nightjar.replicaSecretName" -}}
{{- default (printf "%s-replica" (include "nightjar.fullname" .)) .Values.apiServer.replicaSecret.existingSecret }}
{{- end }}

{{/* the api-server's container port (NIGHTJAR_PORT): its Services, replica address and NetworkPolicy rules */}}
{{- define "nightjar.apiServer.port" -}}
8080
{{- end }}

{{/* apiServer.terminationGracePeriodSeconds, default shutdownDelaySeconds + shutdownDrainSeconds + 15; never at or below their sum */}}
{{- define "nightjar.apiServer.terminationGracePeriodSeconds" -}}
{{- $drain := add (int .Values.apiServer.shutdownDelaySeconds) (int .Values.apiServer.shutdownDrainSeconds) }}
{{- $grace := .Values.apiServer.terminationGracePeriodSeconds }}
{{- if kindIs "invalid" $grace }}{{- $grace = add $drain 15 }}{{- end }}
{{- if le (int $grace) $drain }}
{{- fail (printf "apiServer.terminationGracePeriodSeconds (%d) must be above apiServer.shutdownDelaySeconds + apiServer.shutdownDrainSeconds (%d): the kubelet would kill the api-server before requests in flight drain" (int $grace) $drain) }}
{{- end }}
{{- int $grace }}
{{- end }}

{{/*
A Secret generated once, then kept: an upgrade reads the current value back (lookup), so
what depends on it survives the upgrade. (`helm template` cannot look up, so it shows a
fresh value.) Pass (dict "ctx" $ "name" <Secret name> "key" <data key> "component" <label>).
*/}}
{{- define "nightjar.generatedSecret" -}}
{{- $existing := lookup "v1" "Secret" .ctx.Release.Namespace .name -}}
apiVersion: v1
kind: Secret
metadata:
  name: {{ .name }}
  namespace: {{ .ctx.Release.Namespace }}
  labels:
    {{- include "nightjar.labels" (dict "ctx" .ctx "component" .component) | nindent 4 }}
  annotations:
    helm.sh/resource-policy: keep
type: Opaque
data:
  {{- if and $existing $existing.data (index $existing.data .key) }}
  {{ .key }}: {{ index $existing.data .key }}
  {{- else }}
  {{ .key }}: {{ randAlphaNum 48 | b64enc }}
  {{- end }}
{{- end }}

{{/* the first host name of the HTTPRoute that is not a wildcard; empty when none */}}
{{- define "nightjar.gatewayHost" -}}
{{- $hosts := list }}
{{- range .Values.gateway.httpRoute.hostnames }}{{ if not (hasPrefix "*" .) }}{{ $hosts = append $hosts . }}{{ end }}{{ end }}
{{- with $hosts }}{{ first . }}{{ end }}
{{- end }}

{{- define "nightjar.baseUrl" -}}
{{- if .Values.apiServer.baseUrl }}{{ .Values.apiServer.baseUrl }}
{{- else if .Values.ingress.enabled }}{{ ternary "https" "http" .Values.ingress.tls.enabled }}://{{ .Values.ingress.host }}
{{- else if and .Values.gateway.httpRoute.enabled (include "nightjar.gatewayHost" .) }}https://{{ include "nightjar.gatewayHost" . }}
{{- else }}http://{{ include "nightjar.fullname" . }}-api-server.{{ .Release.Namespace }}.svc:{{ .Values.apiServer.service.port }}
{{- end }}
{{- end }}

{{/* the restricted-profile container securityContext every Nightjar container uses */}}
{{- define "nightjar.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "nightjar.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "nightjar.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{- range . }}
  - name: {{ . }}
{{- end }}
{{- end }}
{{- end }}

{{/*
policy/v1 PodDisruptionBudgets exist from Kubernetes 1.21; older servers serve only
policy/v1beta1. Against a cluster, helm's discovery answers; offline (helm template, lint)
the version it assumes does.
*/}}
{{- define "nightjar.pdbApiVersion" -}}
{{- if or (.Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget") (semverCompare ">=1.21.0-0" .Capabilities.KubeVersion.Version) }}policy/v1{{ else }}policy/v1beta1{{ end }}
{{- end }}

{{/* the standard OTEL_* variables of a process that traces; pass (dict "ctx" $ "service" "nightjar-api-server") */}}
{{- define "nightjar.tracingEnv" -}}
{{- $tr := .ctx.Values.tracing }}
{{- if $tr.endpoint }}
- name: OTEL_SERVICE_NAME
  value: {{ .service | quote }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ $tr.endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ $tr.protocol | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ $tr.sampler | quote }}
{{- if not (kindIs "invalid" $tr.samplerArg) }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ $tr.samplerArg | quote }}
{{- end }}
{{- if $tr.headers.existingSecret }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom:
    secretKeyRef:
      name: {{ $tr.headers.existingSecret }}
      key: {{ $tr.headers.key }}
{{- end }}
{{- end }}
{{- end }}
