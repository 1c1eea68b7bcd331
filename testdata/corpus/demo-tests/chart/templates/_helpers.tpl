{{/* A suffix that differs on every install, as many charts make one. */}}
{{- define "demo.suffix" -}}
{{ randAlphaNum 5 | lower }}
{{- end }}
