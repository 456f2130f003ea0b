output "task_app_id" {
  description = "The ID of the web app, for coder_ai_task.app_id. Empty when no web app is created."
  value       = try(coder_app.web[0].id, "")
}

output "module_folder" {
  description = "The module's runtime folder relative to $HOME."
  value       = var.module_folder
}

output "start_config" {
  description = "The settings handed to the start script (also embedded, gzip+base64, in the start coder_script)."
  value       = local.start_config
}

output "stop_config" {
  description = "The settings handed to the stop script (also embedded, gzip+base64, in the stop coder_script)."
  value       = local.stop_config
}

output "start_script" {
  description = "The rendered start coder_script."
  value       = local.start_wrapper
}

output "stop_script" {
  description = "The rendered stop coder_script."
  value       = local.stop_wrapper
}

output "state_file_path" {
  description = "The AgentAPI state file the scripts use ($HOME is expanded in the workspace)."
  value       = local.state_file_path
}

output "pid_file_path" {
  description = "The AgentAPI PID file the scripts use ($HOME is expanded in the workspace)."
  value       = local.pid_file_path
}
