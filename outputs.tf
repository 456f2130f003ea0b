output "task_app_id" {
  description = "The ID of the Goose web app, for coder_ai_task.app_id in a task template. Empty when no web app is created."
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
