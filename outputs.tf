output "task_app_id" {
  description = "The ID of the Goose web app, for coder_ai_task.app_id in a task template (with task = data.coder_task.me). Empty when no web app is created."
  value       = module.agentapi.task_app_id
}

output "session_name" {
  description = "The name of the Goose session this workspace starts and resumes."
  value       = local.session_name
}

output "module_directory" {
  description = "The folder, relative to $HOME, that holds the module's scripts, logs, state and PID files."
  value       = local.module_folder
}

output "scripts" {
  description = "The `coder exp sync` names of the module's start-time coder_scripts in run order (install, then start), as the registry's coder-utils modules give them. Another module's script waits for Goose's with `coder exp sync want <its name> <each of these>` (Coder v2.30+ with the agent socket enabled)."
  value       = module.agentapi.scripts
}

output "install_script_id" {
  description = "The ID of the module's install coder_script (also its log source ID in Coder)."
  value       = module.agentapi.install_script_id
}

output "start_script_id" {
  description = "The ID of the module's start coder_script (also its log source ID in Coder). To order it among other scripts (Coder v2.39+), name the module in a coder_script_order rule: run = [\"module.goose\"], phase = \"start\"."
  value       = module.agentapi.start_script_id
}

output "stop_script_id" {
  description = "The ID of the module's stop coder_script (also its log source ID in Coder). To order it among other scripts (Coder v2.39+), name the module in a coder_script_order rule with phase = \"stop\"."
  value       = module.agentapi.stop_script_id
}
