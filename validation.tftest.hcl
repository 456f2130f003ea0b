# Every variable validation rejects a bad value at plan time.

mock_provider "coder" {}

variables {
  agent_id       = "agent-1"
  goose_provider = "anthropic"
  goose_model    = "claude-sonnet-4-5"
}

run "empty_agent_id" {
  command = plan
  variables { agent_id = " " }
  expect_failures = [var.agent_id]
}

run "relative_folder" {
  command = plan
  variables { folder = "projects/app" }
  expect_failures = [var.folder]
}

run "empty_icon" {
  command = plan
  variables { icon = "" }
  expect_failures = [var.icon]
}

run "goose_version_not_a_version" {
  command = plan
  variables { goose_version = "nightly" }
  expect_failures = [var.goose_version]
}

run "goose_version_oldest_with_config_layers" {
  command = plan
  variables { goose_version = "v1.34.0" }
}

run "goose_provider_with_spaces" {
  command = plan
  variables { goose_provider = "my provider" }
  expect_failures = [var.goose_provider]
}

run "goose_model_with_newline" {
  command = plan
  variables { goose_model = "model\nrm -rf /" }
  expect_failures = [var.goose_model]
}

run "session_name_with_slash" {
  command = plan
  variables { session_name = "../other" }
  expect_failures = [var.session_name]
}

run "agentapi_version_without_v" {
  command = plan
  variables { agentapi_version = "0.12.1" }
  expect_failures = [var.agentapi_version]
}

run "agentapi_port_out_of_range" {
  command = plan
  variables { agentapi_port = 80 }
  expect_failures = [var.agentapi_port]
}

run "agentapi_port_fractional" {
  command = plan
  variables { agentapi_port = 3284.5 }
  expect_failures = [var.agentapi_port]
}

run "additional_extensions_not_a_map" {
  command = plan
  variables { additional_extensions = "- just\n- a list" }
  expect_failures = [var.additional_extensions]
}

run "additional_extensions_invalid_yaml" {
  command = plan
  variables { additional_extensions = "github: [unclosed" }
  expect_failures = [var.additional_extensions]
}

run "relative_state_file_path" {
  command = plan
  variables { state_file_path = "state.json" }
  expect_failures = [var.state_file_path]
}

run "state_file_path_is_a_directory" {
  command = plan
  variables { state_file_path = "/var/lib/goose/" }
  expect_failures = [var.state_file_path]
}

run "relative_pid_file_path" {
  command = plan
  variables { pid_file_path = "agentapi.pid" }
  expect_failures = [var.pid_file_path]
}

run "goose_installer_url_not_http" {
  command = plan
  variables { goose_installer_url = "ftp://mirror/download_cli.sh" }
  expect_failures = [var.goose_installer_url]
}

run "goose_installer_url_plain_http" {
  command = plan
  variables { goose_installer_url = "http://mirror.example.com/download_cli.sh" }
  expect_failures = [var.goose_installer_url]
}

run "agentapi_download_url_trailing_slash" {
  command = plan
  variables { agentapi_download_url = "https://mirror.example.com/agentapi/" }
  expect_failures = [var.agentapi_download_url]
}

run "agentapi_download_url_plain_http" {
  command = plan
  variables { agentapi_download_url = "http://mirror.example.com/agentapi" }
  expect_failures = [var.agentapi_download_url]
}

# A host that only starts like a loopback name is not loopback.
run "agentapi_download_url_http_lookalike_of_localhost" {
  command = plan
  variables { agentapi_download_url = "http://localhost.mirror.example.com/agentapi" }
  expect_failures = [var.agentapi_download_url]
}

run "agentapi_download_url_http_with_loopback_userinfo" {
  command = plan
  variables { agentapi_download_url = "http://127.0.0.1@mirror.example.com/agentapi" }
  expect_failures = [var.agentapi_download_url]
}

run "goose_download_url_plain_http" {
  command = plan
  variables { goose_download_url = "http://mirror.example.com/goose" }
  expect_failures = [var.goose_download_url]
}

run "goose_download_url_trailing_slash" {
  command = plan
  variables { goose_download_url = "https://mirror.example.com/goose/" }
  expect_failures = [var.goose_download_url]
}

run "node_download_url_not_a_url" {
  command = plan
  variables { node_download_url = "nodejs.org/dist" }
  expect_failures = [var.node_download_url]
}

run "node_download_url_plain_http" {
  command = plan
  variables { node_download_url = "http://nodejs.mirror.example.com/dist" }
  expect_failures = [var.node_download_url]
}

run "agentapi_sha256_too_short" {
  command = plan
  variables { agentapi_sha256 = { amd64 = "abc123" } }
  expect_failures = [var.agentapi_sha256]
}

run "agentapi_sha256_unknown_architecture" {
  command = plan
  variables { agentapi_sha256 = { x86_64 = "0000000000000000000000000000000000000000000000000000000000000000" } }
  expect_failures = [var.agentapi_sha256]
}

run "goose_sha256_not_hex" {
  command = plan
  variables { goose_sha256 = { arm64 = "zzzz000000000000000000000000000000000000000000000000000000000000" } }
  expect_failures = [var.goose_sha256]
}

run "goose_sha256_with_an_installer" {
  command = plan
  variables {
    goose_installer_url = "https://mirror.example.com/download_cli.sh"
    goose_sha256        = { amd64 = "0000000000000000000000000000000000000000000000000000000000000000" }
  }
  expect_failures = [var.goose_sha256]
}

# The values the rules accept: https mirrors, local mirrors on loopback or
# file://, and full checksum maps in either case.
run "download_settings_accepted" {
  command = plan
  variables {
    agentapi_download_url = "http://127.0.0.1:8080/agentapi"
    goose_download_url    = "http://[::1]:8080"
    node_download_url     = "file:///srv/mirror/node"
    goose_installer_url   = ""
    agentapi_sha256 = {
      amd64 = "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
      arm64 = "0000000000000000000000000000000000000000000000000000000000000000"
    }
    goose_sha256 = { amd64 = "1111111111111111111111111111111111111111111111111111111111111111" }
  }

  assert {
    condition     = module.agentapi.start_settings.agent.agentapi.sha256.amd64 == "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
    error_message = "agentapi_sha256 must reach the start settings"
  }
  assert {
    condition     = module.agentapi.start_settings.agent.goose.sha256 == { amd64 = "1111111111111111111111111111111111111111111111111111111111111111" }
    error_message = "goose_sha256 must reach the start settings"
  }
  assert {
    condition     = module.agentapi.start_settings.agent.goose.download_url == "http://[::1]:8080"
    error_message = "goose_download_url must reach the start settings"
  }
}

run "localhost_mirror_installer_accepted" {
  command = plan
  variables { goose_installer_url = "http://localhost:9000/download_cli.sh" }

  assert {
    condition     = module.agentapi.start_settings.agent.goose.installer_url == "http://localhost:9000/download_cli.sh"
    error_message = "a loopback installer URL must reach the start settings"
  }
}

run "negative_stop_turn_wait" {
  command = plan
  variables { stop_turn_wait_seconds = -1 }
  expect_failures = [var.stop_turn_wait_seconds]
}

run "zero_sigterm_wait" {
  command = plan
  variables { stop_sigterm_wait_seconds = 0 }
  expect_failures = [var.stop_sigterm_wait_seconds]
}

run "additional_extension_named_proto" {
  command = plan
  variables { additional_extensions = "__proto__:\n  type: builtin\n  name: developer\n" }
  expect_failures = [var.additional_extensions]
}

run "additional_extension_named_constructor" {
  command = plan
  variables { additional_extensions = "Constructor:\n  type: builtin\n  name: developer\n" }
  expect_failures = [var.additional_extensions]
}

run "goose_mode_unknown" {
  command = plan
  variables { goose_mode = "yolo" }
  expect_failures = [var.goose_mode]
}

run "goose_mode_wrong_case" {
  command = plan
  variables { goose_mode = "Smart_Approve" }
  expect_failures = [var.goose_mode]
}

run "allowed_host_with_port" {
  command = plan
  variables { agentapi_allowed_hosts = ["coder.example.com:443"] }
  expect_failures = [var.agentapi_allowed_hosts]
}

run "allowed_host_with_scheme" {
  command = plan
  variables { agentapi_allowed_hosts = ["https://coder.example.com"] }
  expect_failures = [var.agentapi_allowed_hosts]
}

run "allowed_host_pattern" {
  command = plan
  variables { agentapi_allowed_hosts = ["*.apps.example.com"] }
  expect_failures = [var.agentapi_allowed_hosts]
}

run "allowed_hosts_in_one_string" {
  command = plan
  variables { agentapi_allowed_hosts = ["a.example.com b.example.com"] }
  expect_failures = [var.agentapi_allowed_hosts]
}

run "allowed_hosts_comma_separated" {
  command = plan
  variables { agentapi_allowed_hosts = ["a.example.com,b.example.com"] }
  expect_failures = [var.agentapi_allowed_hosts]
}

run "allowed_host_ipv6_without_brackets" {
  command = plan
  variables { agentapi_allowed_hosts = ["fd00::1"] }
  expect_failures = [var.agentapi_allowed_hosts]
}

run "allowed_host_empty" {
  command = plan
  variables { agentapi_allowed_hosts = [""] }
  expect_failures = [var.agentapi_allowed_hosts]
}

run "allowed_origin_without_scheme" {
  command = plan
  variables { agentapi_allowed_origins = ["coder.example.com"] }
  expect_failures = [var.agentapi_allowed_origins]
}

run "allowed_origin_with_path" {
  command = plan
  variables { agentapi_allowed_origins = ["https://coder.example.com/dashboard"] }
  expect_failures = [var.agentapi_allowed_origins]
}

run "allowed_origin_trailing_slash" {
  command = plan
  variables { agentapi_allowed_origins = ["https://coder.example.com/"] }
  expect_failures = [var.agentapi_allowed_origins]
}

run "allowed_origin_other_scheme" {
  command = plan
  variables { agentapi_allowed_origins = ["ftp://coder.example.com"] }
  expect_failures = [var.agentapi_allowed_origins]
}

run "allowed_host_hostile" {
  command = plan
  variables { agentapi_allowed_hosts = ["x'; rm -rf / #"] }
  expect_failures = [var.agentapi_allowed_hosts]
}

run "allowed_origin_hostile" {
  command = plan
  variables { agentapi_allowed_origins = ["https://a.example\nAGENTAPI_ALLOWED_HOSTS=*"] }
  expect_failures = [var.agentapi_allowed_origins]
}

run "task_enabled_without_an_id" {
  command = plan
  variables {
    task = { enabled = true, id = " ", prompt = "do it" }
  }
  expect_failures = [var.task]
}

run "web_app_display_name_empty" {
  command = plan
  variables { web_app_display_name = " " }
  expect_failures = [var.web_app_display_name]
}

run "web_app_display_name_two_lines" {
  command = plan
  variables { web_app_display_name = "Goose\nchat" }
  expect_failures = [var.web_app_display_name]
}

run "cli_app_display_name_too_long" {
  command = plan
  variables { cli_app_display_name = "GGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGG" }
  expect_failures = [var.cli_app_display_name]
}

run "ai_gateway_with_a_provider_it_does_not_serve" {
  command = plan
  variables {
    enable_ai_gateway = true
    goose_provider    = "databricks"
  }
  expect_failures = [var.enable_ai_gateway]
}

run "agent_firewall_with_neither_wrapper_nor_command" {
  command = plan
  variables { agent_firewall = {} }
  expect_failures = [var.agent_firewall]
}

run "agent_firewall_with_both_wrapper_and_command" {
  command = plan
  variables {
    agent_firewall = { wrapper_path = "/fw/wrapper.sh", command = ["boundary", "--"] }
  }
  expect_failures = [var.agent_firewall]
}

run "agent_firewall_config_without_wrapper" {
  command = plan
  variables {
    agent_firewall = { config_path = "/fw/config.yaml", command = ["boundary", "--"] }
  }
  expect_failures = [var.agent_firewall]
}

run "agent_firewall_relative_wrapper" {
  command = plan
  variables {
    agent_firewall = { wrapper_path = "fw/wrapper.sh" }
  }
  expect_failures = [var.agent_firewall]
}

run "agent_firewall_command_with_newline" {
  command = plan
  variables {
    agent_firewall = { command = ["boundary", "--allow\nrm -rf /", "--"] }
  }
  expect_failures = [var.agent_firewall]
}

run "agent_firewall_command_starting_empty" {
  command = plan
  variables {
    agent_firewall = { command = [" ", "--"] }
  }
  expect_failures = [var.agent_firewall]
}

run "agent_firewall_command_starting_with_an_option" {
  command = plan
  variables {
    agent_firewall = { command = ["-v", "boundary", "--"] }
  }
  expect_failures = [var.agent_firewall]
}

# The values version 3.x's README and defaults used, each decided at plan time
# (README, Upgrading from 3.x). An alias plans with a warning and hands the
# scripts the tested release, never the alias.
run "goose_version_stable_from_3x" {
  command = plan
  variables { goose_version = "stable" }
  expect_failures = [check.goose_version_alias]

  assert {
    condition     = module.agentapi.start_settings.agent.goose.version == local.tested_versions.goose_version
    error_message = "\"stable\" must install the tested Goose"
  }
}

run "goose_version_latest" {
  command = plan
  variables { goose_version = "latest" }
  expect_failures = [check.goose_version_alias]

  assert {
    condition     = module.agentapi.start_settings.agent.goose.version == local.tested_versions.goose_version
    error_message = "\"latest\" must install the tested Goose"
  }
}

run "goose_version_unset_installs_the_tested_release" {
  command = plan

  assert {
    condition     = module.agentapi.start_settings.agent.goose.version == local.tested_versions.goose_version && can(regex("^[0-9]+\\.[0-9]+\\.[0-9]+$", local.tested_versions.goose_version))
    error_message = "an unset goose_version must install the tested Goose, a release X.Y.Z"
  }
}

run "goose_version_from_the_3x_readme" {
  command = plan
  variables { goose_version = "v1.0.31" }
  expect_failures = [var.goose_version]
}

run "goose_version_pinned_reaches_the_scripts_without_v" {
  command = plan
  variables { goose_version = "v1.46.1" }

  assert {
    condition     = module.agentapi.start_settings.agent.goose.version == "1.46.1"
    error_message = "a pinned goose_version must reach the scripts as X.Y.Z"
  }
}

run "agentapi_version_latest_from_the_3x_readme" {
  command = plan
  variables { agentapi_version = "latest" }
  expect_failures = [check.agentapi_version_alias]

  assert {
    condition     = module.agentapi.start_settings.agent.agentapi.version == local.tested_versions.agentapi_version
    error_message = "\"latest\" must install the tested AgentAPI"
  }
}

run "agentapi_version_stable" {
  command = plan
  variables { agentapi_version = "stable" }
  expect_failures = [check.agentapi_version_alias]

  assert {
    condition     = module.agentapi.start_settings.agent.agentapi.version == local.tested_versions.agentapi_version
    error_message = "\"stable\" must install the tested AgentAPI"
  }
}

run "agentapi_version_unset_installs_the_tested_release" {
  command = plan

  assert {
    condition     = module.agentapi.start_settings.agent.agentapi.version == local.tested_versions.agentapi_version && can(regex("^v[0-9]+\\.[0-9]+\\.[0-9]+$", local.tested_versions.agentapi_version))
    error_message = "an unset agentapi_version must install the tested AgentAPI, a release vX.Y.Z"
  }
}

# The plan-time check's boundary: the last release before persistence warns, the first passes.
run "agentapi_version_just_before_persistence" {
  command = plan
  variables { agentapi_version = "v0.11.99" }
  expect_failures = [check.agentapi_version_supports_persistence]
}

run "agentapi_version_first_with_persistence" {
  command = plan
  variables { agentapi_version = "v0.12.0" }
}

# 3.x's default: it still installs, without state persistence, with a warning.
run "agentapi_version_3x_default" {
  command = plan
  variables { agentapi_version = "v0.10.0" }
  expect_failures = [check.agentapi_version_supports_persistence]

  assert {
    condition     = module.agentapi.start_settings.agent.agentapi.version == "v0.10.0"
    error_message = "a pinned agentapi_version must reach the scripts as given"
  }
}

run "folder_relative_to_home_like_3x" {
  command = plan
  variables { folder = "~/project" }
  expect_failures = [var.folder]
}

# ai_prompt: the prompt outside a task, delivered as the task prompt is.
run "ai_prompt_in_a_plain_workspace" {
  command = plan
  variables { ai_prompt = "Fix the flaky test." }

  assert {
    condition     = module.agentapi.start_settings.agent.goose.prompt == "Fix the flaky test." && module.agentapi.stop_settings.layer.task.id == ""
    error_message = "ai_prompt must reach the start settings as the prompt, with no task"
  }
}

run "ai_prompt_in_a_task_template_outside_a_task" {
  command = plan
  variables {
    ai_prompt = "Fix the flaky test."
    task      = { enabled = false, id = "0d6b7d56-2a9c-4d3b-8c86-1f0f6a2b9e44", prompt = "" }
  }

  assert {
    condition     = module.agentapi.start_settings.agent.goose.prompt == "Fix the flaky test."
    error_message = "outside a task ai_prompt must be the prompt"
  }
}

run "ai_prompt_and_a_task_prompt" {
  command = plan
  variables {
    ai_prompt = "Fix the flaky test."
    task      = { enabled = true, id = "6f2b0a3e-1c55-4a59-9b1e-2a2f3c9d7e10", prompt = "Write the docs." }
  }
  expect_failures = [data.coder_workspace.me]
}

run "ai_prompt_empty_in_a_task" {
  command = plan
  variables {
    ai_prompt = ""
    task      = { enabled = true, id = "6f2b0a3e-1c55-4a59-9b1e-2a2f3c9d7e10", prompt = "Write the docs." }
  }

  assert {
    condition     = module.agentapi.start_settings.agent.goose.prompt == "Write the docs."
    error_message = "in a task with an empty ai_prompt the task's prompt must be sent"
  }
}

run "telemetry_without_an_endpoint" {
  command = plan
  variables { telemetry = { enabled = true } }
  expect_failures = [var.telemetry]
}

run "telemetry_over_grpc" {
  command = plan
  variables { telemetry = { enabled = true, otlp_endpoint = "http://localhost:4317", otlp_protocol = "grpc" } }
  expect_failures = [var.telemetry]
}

run "telemetry_attribute_name_with_a_comma" {
  command = plan
  variables { telemetry = { enabled = true, otlp_endpoint = "http://localhost:4318", resource_attributes = { "team,x" = "a" } } }
  expect_failures = [var.telemetry]
}

run "telemetry_endpoint_set_while_off" {
  command = plan
  variables { telemetry = { otlp_endpoint = "http://localhost:4318" } }
}

run "telemetry_attribute_value_with_a_comma" {
  command = plan
  variables { telemetry = { enabled = true, otlp_endpoint = "http://localhost:4318", resource_attributes = { team = "a,b" } } }
  expect_failures = [var.telemetry]
}
