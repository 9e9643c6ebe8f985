{{- define "callassist.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "callassist.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "callassist.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: app
{{- end -}}

{{- define "callassist.secretName" -}}
{{- default (printf "%s-secrets" (include "callassist.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{- /* CALLASSIST_REDIS_URL: a Sentinel URL, a URL from a Secret, or a plain URL. */ -}}
{{- define "callassist.redisEnv" -}}
{{- if .Values.redis.sentinel.enabled }}
- name: CALLASSIST_REDIS_URL
  value: {{ printf "redis+sentinel://%s/%s/%v" (join "," .Values.redis.sentinel.hosts) .Values.redis.sentinel.masterName .Values.redis.sentinel.db | quote }}
{{- else if .Values.redis.existingSecret }}
- name: CALLASSIST_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.existingSecret }}
      key: {{ .Values.redis.urlKey }}
{{- else }}
- name: CALLASSIST_REDIS_URL
  value: {{ required "set redis.url, redis.existingSecret or redis.sentinel (pods are stateless: all state is in Redis)" .Values.redis.url | quote }}
{{- end }}
{{- end -}}
