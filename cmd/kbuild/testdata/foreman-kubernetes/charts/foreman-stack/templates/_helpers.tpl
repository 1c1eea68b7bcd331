{{- define "foreman-stack.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "foreman-stack.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "foreman-stack.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "foreman-stack.labels" -}}
app.kubernetes.io/name: {{ include "foreman-stack.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "foreman-stack.image" -}}
{{- printf "%s:%s" .repository .tag }}
{{- end }}

{{- define "foreman-stack.serviceAccountName" -}}
{{- default (include "foreman-stack.fullname" .) .Values.serviceAccount.name }}
{{- end }}
