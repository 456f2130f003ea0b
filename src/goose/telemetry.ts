import type { TelemetrySettings } from "../settings/config.js";

// OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES are lists of
// key=value pairs split at "," and "=" (the OpenTelemetry specification's
// environment variables). Goose 1.47.0 percent-decodes a header's value and
// takes a resource attribute's value as written (test/goose-facts/1.47.0.json,
// "otlp"), so a header's "%", ",", "=" and white space are percent-encoded, and
// an attribute's value holds neither "," nor "=" (variables.tf refuses them);
// names are letters, digits, ".", "_" and "-".
const encoded = (value: string) =>
  value.replace(/[%,=\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
const pairs = (entries: Record<string, string>, value: (text: string) => string) =>
  Object.entries(entries)
    .map(([key, text]) => `${key}=${value(text)}`)
    .join(",");

/**
 * The variables that turn on Goose's OTLP export (read by
 * crates/goose/src/otel/otlp.rs, aaif-goose/goose v1.47.0: an endpoint enables
 * traces, metrics and logs), or none when telemetry is off.
 */
export function telemetryEnv(telemetry: TelemetrySettings): Record<string, string> {
  if (!telemetry.enabled) return {};
  const env: Record<string, string> = {
    OTEL_EXPORTER_OTLP_ENDPOINT: telemetry.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: telemetry.protocol,
    OTEL_RESOURCE_ATTRIBUTES: pairs(telemetry.resourceAttributes, (text) => text),
  };
  if (Object.keys(telemetry.headers).length > 0) env.OTEL_EXPORTER_OTLP_HEADERS = pairs(telemetry.headers, encoded);
  return env;
}
