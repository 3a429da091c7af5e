{{/*
Names, labels and the values every template derives. A "service" below is
one of the seven processes; each gets its own Deployment.
*/}}

{{/* The services, in the order their objects are rendered. */}}
{{- define "ars.serviceNames" -}}
gateway run-executor session artifact memory governance agent-registry
{{- end }}

{{/* The port of the NATS-only services' health endpoint (HEALTH_PORT): /healthz and /readyz. */}}
{{- define "ars.healthPort" -}}8081{{- end }}

{{- define "ars.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
`<release>-agent-run-service`, or the release name alone when it already
contains the chart name; at most 63 characters.
*/}}
{{- define "ars.fullname" -}}
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

{{/*
`<fullname>-<service>`: the fullname is shortened, never the service, so
that the seven names stay distinct within 63 characters.
Call with (dict "root" $ "service" "<service>").
*/}}
{{- define "ars.componentName" -}}
{{- $room := sub 62 (len .service) | int }}
{{- printf "%s-%s" (include "ars.fullname" .root | trunc $room | trimSuffix "-") .service }}
{{- end }}

{{- define "ars.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Call with (dict "root" $ "service" "<service>"). */}}
{{- define "ars.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ars.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .service }}
{{- end }}

{{/* Call with (dict "root" $ "service" "<service>"). */}}
{{- define "ars.labels" -}}
{{ include "ars.selectorLabels" . }}
app.kubernetes.io/version: {{ include "ars.imageTag" .root | quote }}
app.kubernetes.io/part-of: agent-run-service
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ include "ars.chart" .root }}
{{- end }}

{{/* Labels of objects that belong to no one service (the Secret, the ServiceAccount). */}}
{{- define "ars.commonLabels" -}}
app.kubernetes.io/name: {{ include "ars.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ include "ars.imageTag" . | quote }}
app.kubernetes.io/part-of: agent-run-service
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ include "ars.chart" . }}
{{- end }}

{{- define "ars.imageTag" -}}
{{- .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "ars.image" -}}
{{- printf "%s:%s" .Values.image.repository (include "ars.imageTag" .) }}
{{- end }}

{{/* The service's own values block: `gateway`, or `services.<service>`. Call with (dict "root" $ "service" "<service>"); renders JSON. */}}
{{- define "ars.serviceValues" -}}
{{- if eq .service "gateway" }}
{{- .root.Values.gateway | toJson }}
{{- else }}
{{- index .root.Values.services .service | default dict | toJson }}
{{- end }}
{{- end }}

{{- define "ars.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "ars.fullname" .)) }}
{{- end }}

{{- define "ars.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- .Values.serviceAccount.name | default (include "ars.fullname" .) }}
{{- else }}
{{- .Values.serviceAccount.name | default "default" }}
{{- end }}
{{- end }}

{{/* The NATS chart's fullname, as that chart computes it (its `nats.fullname`). */}}
{{- define "ars.natsFullname" -}}
{{- $nats := .Values.nats }}
{{- if $nats.fullnameOverride }}
{{- $nats.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default "nats" $nats.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ars.natsNamespace" -}}
{{- .Values.nats.namespaceOverride | default .Release.Namespace }}
{{- end }}

{{/*
NATS_URL: the subchart's client Service when nats.enabled, else nats.url.
*/}}
{{- define "ars.natsUrl" -}}
{{- if .Values.nats.enabled }}
{{- $service := dig "service" "name" "" .Values.nats | default (include "ars.natsFullname" .) }}
{{- $port := dig "config" "nats" "port" 4222 .Values.nats }}
{{- if .Values.nats.namespaceOverride }}
{{- printf "nats://%s.%s.svc:%v" $service (include "ars.natsNamespace" .) $port }}
{{- else }}
{{- printf "nats://%s:%v" $service $port }}
{{- end }}
{{- else }}
{{- required "nats.url is required when nats.enabled is false: the URL of your NATS (JetStream) cluster" .Values.nats.url }}
{{- end }}
{{- end }}

{{/*
host:port of the NATS monitoring endpoint KEDA reads. KEDA finds a
clustered consumer's leader at `<server name>.<this host>`, so this must be
the headless Service whose pod names are the server names (the official
chart's `<fullname>-headless`), qualified with its namespace: KEDA runs in
its own.
*/}}
{{- define "ars.natsMonitoringEndpoint" -}}
{{- $keda := index .Values.services "run-executor" "autoscaling" "keda" }}
{{- if $keda.natsServerMonitoringEndpoint }}
{{- $keda.natsServerMonitoringEndpoint }}
{{- else if .Values.nats.enabled }}
{{- $headless := dig "headlessService" "name" "" .Values.nats | default (printf "%s-headless" (include "ars.natsFullname" .)) }}
{{- printf "%s.%s.svc:%v" $headless (include "ars.natsNamespace" .) (dig "config" "monitor" "port" 8222 .Values.nats) }}
{{- else }}
{{- $host := (urlParse (first (splitList "," .Values.nats.url) | trim)).hostname }}
{{- $labels := splitList "." $host }}
{{- if eq (len $labels) 1 }}
{{- printf "%s-headless.%s.svc:8222" $host .Release.Namespace }}
{{- else }}
{{- printf "%s-headless.%s:8222" (first $labels) (rest $labels | join ".") }}
{{- end }}
{{- end }}
{{- end }}

{{/*
An env value as text: YAML numbers arrive as floats, so whole ones are
printed without an exponent (20000, not 2e+04).
*/}}
{{- define "ars.envValue" -}}
{{- if kindIs "float64" . }}
{{- if eq . (floor .) }}{{ printf "%.0f" . }}{{ else }}{{ . }}{{ end }}
{{- else if kindIs "invalid" . }}
{{- else }}
{{- . }}
{{- end }}
{{- end }}

{{/*
run-executor's terminationGracePeriodSeconds: its drain (grace plus an
unsafe call's allowance) and 15 s for the rest of shutdown. Call with
(dict "env" <the container's plain env>).
*/}}
{{- define "ars.executorGraceSeconds" -}}
{{- $grace := get .env "EXECUTOR_DRAIN_GRACE_MS" | default 20000 | int64 }}
{{- $unsafe := get .env "EXECUTOR_DRAIN_UNSAFE_CALL_MS" | default 20000 | int64 }}
{{- add (div (add $grace $unsafe 999) 1000) 15 }}
{{- end }}

{{/* Refuses values that would deploy something that cannot work. */}}
{{- define "ars.validate" -}}
{{- if eq .Values.auth.mode "production" }}
{{- $_ := required "auth.issuer is required when auth.mode is production (the OIDC issuer, exact `iss`)" .Values.auth.issuer }}
{{- $_ := required "auth.audience is required when auth.mode is production (the tokens' `aud`)" .Values.auth.audience }}
{{- $_ := required "auth.jwksUrl is required when auth.mode is production (the issuer's jwks_uri)" .Values.auth.jwksUrl }}
{{- end }}
{{- if .Values.auth.rotation.enabled }}
{{- if eq .Values.auth.rotation.issuer .Values.auth.issuer }}
{{- fail "auth.rotation.issuer must differ from auth.issuer: rotated tokens are the gateway's, not the identity provider's" }}
{{- end }}
{{- if and (not .Values.secrets.existingSecret) (not .Values.secrets.rotationSigningKey) }}
{{- fail "auth.rotation.enabled needs a signing key: set secrets.rotationSigningKey (PKCS#8 PEM or private JWK) or a secrets.existingSecret with the key rotation-signing-key" }}
{{- end }}
{{- end }}
{{- if .Values.nats.enabled }}
{{- $servers := 1 }}
{{- if dig "config" "cluster" "enabled" false .Values.nats }}
{{- $servers = dig "config" "cluster" "replicas" 1 .Values.nats | int }}
{{- end }}
{{- if gt (int .Values.nats.jetstreamReplicas) $servers }}
{{- fail (printf "nats.jetstreamReplicas (%v) exceeds the %d NATS server(s) nats.config.cluster gives: streams could not be created" .Values.nats.jetstreamReplicas $servers) }}
{{- end }}
{{- if not (dig "config" "jetstream" "enabled" false .Values.nats) }}
{{- fail "nats.config.jetstream.enabled must be true: the services need JetStream" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The ConfigMap key of one flow definition: a hash of its tenant and flow id (keys cannot hold "/"). */}}
{{- define "ars.flowKey" -}}
{{- printf "%s/%s" (index . 0) (index . 1) | sha256sum | trunc 20 }}.json
{{- end }}
