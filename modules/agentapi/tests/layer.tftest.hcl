# The AgentAPI layer on its own, called the way any agent module would call it:
# it knows nothing about Goose and passes the caller's settings through unread.

mock_provider "coder" {}

variables {
  agent_id                 = "agent-1"
  app_slug                 = "aider"
  display_name             = "Aider"
  icon                     = "/icon/aider.svg"
  module_folder            = ".coder-modules/acme/aider"
  agentapi_port            = 3300
  enable_state_persistence = true
  state_file_path          = ""
  pid_file_path            = "/run/aider.pid"
  install_node             = true
  node_download_url        = "https://nodejs.org/dist"
  start_script             = "console.log('start')"
  stop_script              = "console.log('stop')"
  start_settings           = "{\"model\": \"m\", \"nested\": {\"n\": 1}}"
  stop_settings            = "{}"
}

run "passes_the_callers_settings_through_beside_its_own" {
  command = plan


  assert {
    condition     = output.start_settings.agent == { model = "m", nested = { n = 1 } } && output.stop_settings.agent == {}
    error_message = "the caller's documents must arrive unchanged under \"agent\""
  }
  assert {
    condition     = output.start_settings.layer.port == 3300 && output.stop_settings.layer.pid_file == "/run/aider.pid"
    error_message = "the layer's own part must carry the port and the persistence paths"
  }
  assert {
    condition     = strcontains(output.start_script, "CODER_MODULE_SCRIPT='${base64gzip("console.log('start')")}'") && strcontains(output.stop_script, "CODER_MODULE_SCRIPT='${base64gzip("console.log('stop')")}'")
    error_message = "each script must get its own code in CODER_MODULE_SCRIPT, to start a helper running it"
  }
}

run "says_nothing_about_goose" {
  command = plan


  assert {
    condition     = !strcontains(lower(output.start_script), "goose") && !strcontains(lower(output.stop_script), "goose")
    error_message = "the rendered wrapper must not mention Goose when another agent uses the layer"
  }
  assert {
    condition     = strcontains(output.start_script, "aider-module: error:")
    error_message = "the wrapper's messages must name the calling module"
  }
}

run "rejects_settings_that_are_not_a_json_object" {
  command = plan


  variables {
    start_settings = "[1, 2]"
  }

  expect_failures = [var.start_settings]
}
