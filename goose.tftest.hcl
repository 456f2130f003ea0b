# Plan-time checks of the root module against the real coder provider's schema.

mock_provider "coder" {}

variables {
  agent_id       = "agent-1"
  goose_provider = "anthropic"
  goose_model    = "claude-sonnet-4-5"
}

run "defaults_enable_persistence_and_leave_paths_to_the_scripts" {
  command = plan

  assert {
    condition     = module.agentapi.start_settings.layer.persistence == true
    error_message = "state persistence must be on by default"
  }
  assert {
    condition = (
      module.agentapi.start_settings.layer.state_file == "" && module.agentapi.start_settings.layer.pid_file == "" &&
      module.agentapi.stop_settings.layer.state_file == "" && module.agentapi.stop_settings.layer.pid_file == ""
    )
    error_message = "empty paths must reach both scripts, which own the defaults"
  }
  assert {
    condition     = module.agentapi.start_settings.layer.module_folder == ".coder-modules/coder/goose" && output.module_directory == ".coder-modules/coder/goose"
    error_message = "runtime files must live under $HOME/.coder-modules/coder/goose"
  }
  assert {
    condition     = module.agentapi.start_settings.agent.goose.continue == true && module.agentapi.start_settings.layer.port == 3284
    error_message = "Goose must resume by default, and AgentAPI listen on 3284"
  }
}

run "settings_reach_the_rendered_scripts" {
  command = plan

  variables {
    task = { enabled = true, id = "6f2b0a3e-1c55-4a59-9b1e-2a2f3c9d7e10", prompt = "fix the bug" }
  }

  assert {
    condition     = strcontains(module.agentapi.install_script, base64gzip(jsonencode(module.agentapi.start_settings))) && strcontains(module.agentapi.start_script, base64gzip(jsonencode(module.agentapi.start_settings)))
    error_message = "the install and start coder_scripts must embed the start settings"
  }
  assert {
    condition     = strcontains(module.agentapi.stop_script, base64gzip(jsonencode(module.agentapi.stop_settings)))
    error_message = "the stop coder_script must embed the stop settings"
  }
  assert {
    condition     = module.agentapi.start_settings.agent.goose.prompt == "fix the bug"
    error_message = "a task's prompt must reach the start settings"
  }
  assert {
    condition     = !strcontains(module.agentapi.start_script, "fix the bug") && !strcontains(module.agentapi.install_script, "fix the bug")
    error_message = "the prompt must not appear as shell source"
  }
  assert {
    condition     = startswith(module.agentapi.install_script, "#!/bin/sh\n") && startswith(module.agentapi.start_script, "#!/bin/sh\n") && startswith(module.agentapi.stop_script, "#!/bin/sh\n")
    error_message = "the scripts must run under /bin/sh"
  }
}

run "custom_paths_reach_both_scripts" {
  command = plan

  variables {
    state_file_path = "/var/lib/goose/chat-state.json"
    pid_file_path   = "/run/user/1000/goose-agentapi.pid"
  }

  assert {
    condition     = module.agentapi.start_settings.layer.state_file == "/var/lib/goose/chat-state.json" && module.agentapi.stop_settings.layer.state_file == "/var/lib/goose/chat-state.json"
    error_message = "a custom state_file_path must reach both scripts"
  }
  assert {
    condition     = module.agentapi.start_settings.layer.pid_file == "/run/user/1000/goose-agentapi.pid" && module.agentapi.stop_settings.layer.pid_file == "/run/user/1000/goose-agentapi.pid"
    error_message = "a custom pid_file_path must reach both scripts"
  }
}

run "persistence_off_reaches_the_start_script" {
  command = plan

  variables {
    enable_state_persistence = false
  }

  assert {
    condition     = module.agentapi.start_settings.layer.persistence == false
    error_message = "enable_state_persistence = false must reach the start script, which records its decision for the stop"
  }
}

run "plain_workspace_without_web_app" {
  command = plan

  variables {
    web_app = false
  }

  assert {
    condition     = output.task_app_id == ""
    error_message = "web_app = false in a plain workspace must create no web app"
  }
  assert {
    condition     = !module.agentapi.stop_settings.layer.task.enabled && module.agentapi.stop_settings.layer.task.id == ""
    error_message = "a plain workspace (task = null) must give the stop script no task"
  }
  assert {
    condition     = module.agentapi.start_settings.agent.goose.prompt == ""
    error_message = "a plain workspace must send no prompt"
  }
}

run "task_forces_the_web_app" {
  command = apply

  variables {
    web_app = false
    task    = { enabled = true, id = "6f2b0a3e-1c55-4a59-9b1e-2a2f3c9d7e10", prompt = "do it" }
  }

  assert {
    condition     = output.task_app_id != ""
    error_message = "a task needs the web app even with web_app = false"
  }
  assert {
    condition     = module.agentapi.stop_settings.layer.task.enabled && module.agentapi.stop_settings.layer.task.id == "6f2b0a3e-1c55-4a59-9b1e-2a2f3c9d7e10"
    error_message = "the stop script must know the task id in a task"
  }
  assert {
    condition     = module.agentapi.start_settings.agent.goose.prompt == "do it"
    error_message = "the task's prompt must reach the start script"
  }
}

# data.coder_task.me outside a task: enabled = false, a random ID, no prompt.
run "a_task_template_outside_a_task_is_a_plain_workspace" {
  command = plan

  variables {
    web_app = false
    task    = { enabled = false, id = "0d6b7d56-2a9c-4d3b-8c86-1f0f6a2b9e44", prompt = "left over" }
  }

  assert {
    condition     = !module.agentapi.stop_settings.layer.task.enabled && module.agentapi.stop_settings.layer.task.id == ""
    error_message = "the provider's random id outside a task must not reach the stop script"
  }
  assert {
    condition     = module.agentapi.start_settings.agent.goose.prompt == ""
    error_message = "outside a task no prompt may reach Goose"
  }
  assert {
    condition     = output.task_app_id == ""
    error_message = "outside a task web_app = false must hold"
  }
}

run "path_based_app_sets_the_chat_base_path" {
  command = plan

  override_data {
    target = module.agentapi.data.coder_workspace.me
    values = { name = "dev", id = "ws-1" }
  }
  override_data {
    target = module.agentapi.data.coder_workspace_owner.me
    values = { name = "alice" }
  }

  assert {
    condition     = module.agentapi.start_settings.layer.chat_base_path == "/@alice/dev.agent-1/apps/goose/chat"
    error_message = "subdomain = false must give AgentAPI the app's path prefix"
  }
}

run "subdomain_app_has_no_chat_base_path" {
  command = plan

  variables {
    subdomain = true
  }

  assert {
    condition     = module.agentapi.start_settings.layer.chat_base_path == ""
    error_message = "a subdomain app is served at the root"
  }
}

run "session_name_defaults_to_the_workspace_id" {
  command = plan

  override_data {
    target = data.coder_workspace.me
    values = { id = "3c1f8e2a-0000-4000-8000-000000000001" }
  }

  assert {
    condition     = output.session_name == "coder-3c1f8e2a-0000-4000-8000-000000000001"
    error_message = "the default session name must derive from the workspace id"
  }
}

run "additional_extensions_are_decoded" {
  command = plan

  variables {
    additional_extensions = <<-EOT
      github:
        type: stdio
        cmd: github-mcp-server
        enabled: true
    EOT
  }

  assert {
    condition     = module.agentapi.start_settings.agent.goose.extensions.github.cmd == "github-mcp-server"
    error_message = "additional_extensions must reach the start settings as data"
  }
}

run "old_agentapi_with_persistence_warns" {
  command = plan

  variables {
    agentapi_version = "v0.11.8"
  }

  expect_failures = [check.agentapi_version_supports_persistence]
}

run "stop_bounds_reach_the_stop_script" {
  command = plan

  variables {
    stop_turn_wait_seconds    = 2
    stop_sigterm_wait_seconds = 20
  }

  assert {
    condition     = module.agentapi.stop_settings.agent.timeouts.turn_ms == 2000 && module.agentapi.stop_settings.agent.timeouts.term_ms == 20000
    error_message = "the stop bounds must reach the stop script in milliseconds"
  }
}

run "interrupted_turns_continue_by_default" {
  command = plan

  assert {
    condition     = module.agentapi.start_settings.agent.goose.continue_interrupted_turn == true
    error_message = "continue_interrupted_turn must default to true"
  }
}

run "interrupted_turns_can_wait_for_input" {
  command = plan

  variables {
    continue_interrupted_turn = false
  }

  assert {
    condition     = module.agentapi.start_settings.agent.goose.continue_interrupted_turn == false
    error_message = "continue_interrupted_turn = false must reach the start script"
  }
}

run "access_defaults_reach_the_start_script" {
  command = plan

  assert {
    condition = (
      length(module.agentapi.start_settings.agent.access.allowed_hosts) == 0 &&
      length(module.agentapi.start_settings.agent.access.allowed_origins) == 0
    )
    error_message = "no host or origin beyond the start's defaults may be allowed by default"
  }
  assert {
    condition     = module.agentapi.start_settings.agent.access.access_url == data.coder_workspace.me.access_url
    error_message = "the start must get the deployment's access URL, the Host a path-based app receives"
  }
  assert {
    condition     = module.agentapi.start_settings.agent.access.subdomain == false
    error_message = "a path-based app is the default"
  }
  assert {
    condition     = module.agentapi.start_settings.agent.goose.mode == "auto" && module.agentapi.stop_settings.agent.goose_mode == "auto"
    error_message = "goose_mode must default to auto in both scripts"
  }
}

run "access_additions_and_mode_reach_the_scripts" {
  command = plan

  variables {
    subdomain                = true
    goose_mode               = "smart_approve"
    agentapi_allowed_hosts   = ["proxy.example.com", "[fd00::1]", "10.0.0.5"]
    agentapi_allowed_origins = ["https://proxy.example.com", "http://[fd00::1]:8080"]
  }

  assert {
    condition     = jsonencode(module.agentapi.start_settings.agent.access.allowed_hosts) == jsonencode(["proxy.example.com", "[fd00::1]", "10.0.0.5"])
    error_message = "agentapi_allowed_hosts must reach the start settings as given"
  }
  assert {
    condition     = jsonencode(module.agentapi.start_settings.agent.access.allowed_origins) == jsonencode(["https://proxy.example.com", "http://[fd00::1]:8080"])
    error_message = "agentapi_allowed_origins must reach the start settings as given"
  }
  assert {
    condition     = module.agentapi.start_settings.agent.access.subdomain == true
    error_message = "subdomain must reach the start settings"
  }
  assert {
    condition     = module.agentapi.start_settings.agent.goose.mode == "smart_approve" && module.agentapi.stop_settings.agent.goose_mode == "smart_approve"
    error_message = "goose_mode must reach both scripts"
  }
}

run "a_star_is_accepted_though_unsafe" {
  command = plan

  variables {
    agentapi_allowed_hosts   = ["*"]
    agentapi_allowed_origins = ["*"]
  }

  assert {
    condition     = jsonencode(module.agentapi.start_settings.agent.access.allowed_hosts) == jsonencode(["*"])
    error_message = "\"*\" must stay possible"
  }
}

run "ai_gateway_is_off_by_default" {
  command = plan

  assert {
    condition     = length(coder_env.ai_gateway_token) == 0 && module.agentapi.start_settings.agent.goose.ai_gateway.enabled == false
    error_message = "the AI Gateway must be off by default, with no token in the workspace"
  }
  assert {
    condition     = length(module.agentapi.start_settings.agent.goose.command_prefix) == 0
    error_message = "Goose must run without a firewall prefix by default"
  }
}

run "ai_gateway_routes_each_provider_and_keeps_the_token_out_of_the_scripts" {
  command = plan

  override_data {
    target = data.coder_workspace.me
    values = { access_url = "https://coder.example.com/" }
  }
  override_data {
    target = data.coder_workspace_owner.me
    values = { session_token = "owner-session-token-1" }
  }

  variables {
    enable_ai_gateway = true
    goose_provider    = "openai"
    goose_model       = "gpt-4o"
  }

  assert {
    condition     = module.agentapi.start_settings.agent.goose.ai_gateway.base_url == "https://coder.example.com/api/v2/aibridge/openai"
    error_message = "openai must go to <access URL>/api/v2/aibridge/openai (Goose appends v1/chat/completions)"
  }
  assert {
    condition     = coder_env.ai_gateway_token[0].name == module.agentapi.start_settings.agent.goose.ai_gateway.token_env && nonsensitive(coder_env.ai_gateway_token[0].value) == "owner-session-token-1"
    error_message = "the owner's session token must reach the workspace in the coder_env the start reads"
  }
  assert {
    condition     = !strcontains(jsonencode(module.agentapi.start_settings), "owner-session-token-1") && !strcontains(jsonencode(module.agentapi.stop_settings), "owner-session-token-1")
    error_message = "the session token must never be in the scripts' settings, which are embedded in the coder_scripts"
  }
}

run "ai_gateway_anthropic_route" {
  command = plan

  override_data {
    target = data.coder_workspace.me
    values = { access_url = "https://coder.example.com" }
  }

  variables {
    enable_ai_gateway = true
  }

  assert {
    condition     = module.agentapi.start_settings.agent.goose.ai_gateway.base_url == "https://coder.example.com/api/v2/aibridge/anthropic"
    error_message = "anthropic must go to <access URL>/api/v2/aibridge/anthropic (Goose appends v1/messages)"
  }
}

run "ai_gateway_over_plain_http_is_warned_about" {
  command = plan

  override_data {
    target = data.coder_workspace.me
    values = { access_url = "http://coder.internal:3000" }
  }

  variables {
    enable_ai_gateway = true
  }

  expect_failures = [check.ai_gateway_over_https]
}

run "ai_gateway_over_loopback_or_https_needs_no_warning" {
  command = plan

  override_data {
    target = data.coder_workspace.me
    values = { access_url = "http://127.0.0.1:3000/" }
  }

  variables {
    enable_ai_gateway = true
  }

  assert {
    condition     = !local.ai_gateway_in_clear
    error_message = "a loopback access URL never leaves the host: no warning"
  }
}

run "agent_firewall_module_outputs_become_wrapper_config_and_separator" {
  command = plan

  variables {
    agent_firewall = {
      wrapper_path = "$HOME/.coder-modules/coder/agent-firewall/scripts/agent-firewall-wrapper.sh"
      config_path  = "$HOME/.coder-modules/coder/agent-firewall/config/config.yaml"
    }
  }

  assert {
    condition = jsonencode(module.agentapi.start_settings.agent.goose.command_prefix) == jsonencode([
      "$HOME/.coder-modules/coder/agent-firewall/scripts/agent-firewall-wrapper.sh",
      "--config=$HOME/.coder-modules/coder/agent-firewall/config/config.yaml",
      "--",
    ])
    error_message = "the wrapper must run Goose as `<wrapper> --config=<config> -- goose ...`"
  }
}

run "agent_firewall_command_is_used_as_given" {
  command = plan

  variables {
    agent_firewall = { command = ["coder", "boundary", "--allow", "domain=coder.example.com", "--"] }
  }

  assert {
    condition     = jsonencode(module.agentapi.start_settings.agent.goose.command_prefix) == jsonencode(["coder", "boundary", "--allow", "domain=coder.example.com", "--"])
    error_message = "a generic command prefix must reach the start unchanged"
  }
}

run "scripts_lists_the_sync_names_in_run_order" {
  command = plan

  assert {
    condition     = output.scripts == ["coder-goose-install_script", "coder-goose-start_script"]
    error_message = "another module waits for Goose's scripts by these names (coder exp sync want <its name> <each>)"
  }
}

run "telemetry_carries_coders_identifiers_to_the_start" {
  command = plan

  variables {
    telemetry = {
      enabled             = true
      otlp_endpoint       = "http://localhost:4318"
      otlp_headers        = { Authorization = "Bearer t" }
      resource_attributes = { team = "platform", "coder.workspace_id" = "forged" }
    }
  }

  assert {
    condition     = module.agentapi.start_settings.agent.goose.telemetry.resource_attributes.team == "platform" && module.agentapi.start_settings.agent.goose.telemetry.resource_attributes["coder.workspace_id"] == data.coder_workspace.me.id
    error_message = "the template's attributes travel, and Coder's workspace identifiers win over one of the same name"
  }
  assert {
    condition     = module.agentapi.start_settings.agent.goose.telemetry.endpoint == "http://localhost:4318" && module.agentapi.start_settings.agent.goose.telemetry.headers.Authorization == "Bearer t"
    error_message = "the endpoint and headers reach the start's settings"
  }
}

run "telemetry_off_sends_nothing" {
  command = plan

  assert {
    condition     = !module.agentapi.start_settings.agent.goose.telemetry.enabled && module.agentapi.start_settings.agent.goose.telemetry.endpoint == "" && length(module.agentapi.start_settings.agent.goose.telemetry.resource_attributes) == 0
    error_message = "with telemetry off, no endpoint or attribute reaches the scripts"
  }
}
