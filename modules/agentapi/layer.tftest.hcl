# The AgentAPI layer on its own, called the way any agent module would call it:
# it knows nothing about Goose and passes the caller's settings through unread.

mock_provider "coder" {}

variables {
  agent_id                 = "agent-1"
  app_slug                 = "aider"
  display_name             = "Aider"
  web_app_display_name     = "Aider chat"
  cli_app_display_name     = "Aider terminal"
  icon                     = "/icon/aider.svg"
  module_folder            = ".coder-modules/acme/aider"
  agentapi_port            = 3300
  enable_state_persistence = true
  state_file_path          = ""
  pid_file_path            = "/run/aider.pid"
  install_node             = true
  node_download_url        = "https://nodejs.org/dist"
  install_script           = "console.log('install')"
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
    condition     = strcontains(output.install_script, "CODER_MODULE_SCRIPT='${base64gzip("console.log('install')")}'") && strcontains(output.start_script, "CODER_MODULE_SCRIPT='${base64gzip("console.log('start')")}'") && strcontains(output.stop_script, "CODER_MODULE_SCRIPT='${base64gzip("console.log('stop')")}'")
    error_message = "each script must get its own code in CODER_MODULE_SCRIPT, to start a helper running it"
  }
}

run "says_nothing_about_goose" {
  command = plan


  assert {
    condition     = !strcontains(lower(output.install_script), "goose") && !strcontains(lower(output.start_script), "goose") && !strcontains(lower(output.stop_script), "goose")
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

run "the_apps_carry_their_display_names" {
  command = apply

  variables {
    cli_app = true
  }

  assert {
    condition     = coder_app.web[0].display_name == "Aider chat" && coder_app.cli[0].display_name == "Aider terminal"
    error_message = "web_app_display_name and cli_app_display_name must name the apps"
  }
  assert {
    condition     = coder_script.install.display_name == "Aider: Install Script" && coder_script.start.display_name == "Aider: Start Script" && coder_script.stop.display_name == "Aider: Stop Script"
    error_message = "the scripts are named as the registry's coder-utils names them, after the agent's display_name"
  }
}

run "the_scripts_announce_themselves_under_coder_utils_names" {
  command = plan

  assert {
    condition     = output.scripts == ["acme-aider-install_script", "acme-aider-start_script"]
    error_message = "the scripts output lists the coder exp sync names in run order, <namespace>-<module>-<kind>_script as coder-utils makes them"
  }
  assert {
    condition     = strcontains(output.install_script, "announce acme-aider-install_script\n") && strcontains(output.install_script, "nice -n 19 coder exp sync \"$@\"") && strcontains(output.install_script, "sync_cli start \"$1\"") && strcontains(output.install_script, "sync_cli complete \"$1\"")
    error_message = "the install script announces itself to coder exp sync, at the lowest priority"
  }
  assert {
    condition     = strcontains(output.start_script, "announce acme-aider-start_script acme-aider-install_script'") && strcontains(output.start_script, "sync_cli want \"$1\" \"$2\"")
    error_message = "the start script announces itself to coder exp sync as wanting the install"
  }
  assert {
    condition     = !strcontains(output.stop_script, "coder exp sync") && !strcontains(output.stop_script, "install.state")
    error_message = "the stop script waits for nothing"
  }
}

run "only_the_install_script_installs_node" {
  command = plan

  assert {
    condition     = strcontains(output.install_script, "NODE_VERSION=") && !strcontains(output.start_script, "NODE_VERSION=") && !strcontains(output.stop_script, "NODE_VERSION=")
    error_message = "Node.js is downloaded by the install script alone; the start runs after it"
  }
}

run "outside_a_task_no_task_reaches_the_stop_script" {
  command = plan

  variables {
    web_app = false
  }

  assert {
    condition     = !output.stop_settings.layer.task.enabled && output.stop_settings.layer.task.id == "" && output.task_app_id == ""
    error_message = "without task_id the stop gets no task, and web_app = false holds"
  }
}

run "a_task_id_makes_a_task" {
  command = apply

  variables {
    web_app = false
    task_id = "6f2b0a3e-1c55-4a59-9b1e-2a2f3c9d7e10"
  }

  assert {
    condition     = output.stop_settings.layer.task.enabled && output.stop_settings.layer.task.id == "6f2b0a3e-1c55-4a59-9b1e-2a2f3c9d7e10"
    error_message = "task_id must reach the stop script"
  }
  assert {
    condition     = output.task_app_id != ""
    error_message = "a task needs the web app even with web_app = false"
  }
}
