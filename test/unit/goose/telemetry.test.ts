import { expect, it } from "vitest";
import { buildLaunchEnv } from "../../../src/goose/commands.js";
import { telemetryEnv } from "../../../src/goose/telemetry.js";
import type { TelemetrySettings } from "../../../src/settings/config.js";

const on: TelemetrySettings = {
  enabled: true,
  endpoint: "http://localhost:4318",
  protocol: "http/protobuf",
  headers: {},
  resourceAttributes: { "coder.workspace_id": "0b7e5c1a", "coder.access_url": "https://coder.example.com/" },
};

it.each<[string, TelemetrySettings, Record<string, string>]>([
  ["off: nothing", { ...on, enabled: false }, {}],
  [
    "on: the endpoint, the protocol and the attributes",
    on,
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://localhost:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_RESOURCE_ATTRIBUTES: "coder.workspace_id=0b7e5c1a,coder.access_url=https://coder.example.com/",
    },
  ],
  [
    "headers with the characters that would split a pair percent-encoded, which Goose decodes; attributes as written",
    { ...on, headers: { Authorization: "Bearer a=b,c%" }, resourceAttributes: { team: "one two\tthree" } },
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://localhost:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer%20a%3Db%2Cc%25",
      OTEL_RESOURCE_ATTRIBUTES: "team=one two\tthree",
    },
  ],
])("%s", (_, settings, want) => {
  expect(telemetryEnv(settings)).toEqual(want);
});

it("replaces a template's own OTEL_* settings in AgentAPI's environment, and adds none when off", () => {
  const base = { PATH: "/bin", OTEL_EXPORTER_OTLP_ENDPOINT: "http://elsewhere:4318" };
  const opts = {
    chatBasePath: "",
    allowedHosts: [],
    allowedOrigins: [],
    provider: "anthropic",
    model: "m",
    mode: "auto" as const,
    pathPrefix: [],
    configLayer: "/m/goose-config.json",
  };
  expect(buildLaunchEnv(base, { ...opts, telemetry: telemetryEnv(on) }).OTEL_EXPORTER_OTLP_ENDPOINT).toBe(
    "http://localhost:4318",
  );
  expect(buildLaunchEnv(base, { ...opts, telemetry: telemetryEnv({ ...on, enabled: false }) })).not.toHaveProperty(
    "OTEL_RESOURCE_ATTRIBUTES",
  );
});
