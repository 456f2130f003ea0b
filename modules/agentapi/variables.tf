# The layer's interface. Values that come from the calling module's own
# variables (the port, the persistence trio, download URLs) are validated
# there, once; this layer validates only what it builds or owns.

variable "agent_id" {
  description = "The ID of the Coder agent that runs AgentAPI."
  type        = string
}

variable "app_slug" {
  description = "The slug of the web app; the CLI app gets \"<slug>-cli\"."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9](-?[a-z0-9])*$", var.app_slug))
    error_message = "app_slug must be lower-case letters and digits separated by single hyphens."
  }
}

variable "display_name" {
  description = "The name of the agent shown on its scripts, as the registry's coder-utils names them: \"<name>: Install Script\", \"<name>: Start Script\", \"<name>: Stop Script\"."
  type        = string
}

variable "web_app_display_name" {
  description = "The name of the web app in the dashboard (validated by the calling module)."
  type        = string
}

variable "cli_app_display_name" {
  description = "The name of the CLI app in the dashboard (validated by the calling module)."
  type        = string
}

variable "task_id" {
  description = "The ID of the Coder task this workspace runs, from the calling module; empty outside a task. In a task the web app is always created and the stop script gets the ID for the task log snapshot. The layer reads no data \"coder_task\" itself."
  type        = string
  default     = ""
  nullable    = false
}

variable "icon" {
  description = "The icon of the apps and scripts."
  type        = string
}

variable "order" {
  description = "The order of the apps in the Coder dashboard."
  type        = number
  default     = null
}

variable "group" {
  description = "The group of the apps in the Coder dashboard."
  type        = string
  default     = null
}

variable "web_app" {
  description = "Create the web app. It is always created in a Coder task (task_id set), whose page embeds it."
  type        = bool
  default     = true
}

variable "cli_app" {
  description = "Create a terminal app that attaches to the agent."
  type        = bool
  default     = false
}

variable "subdomain" {
  description = "Serve the web app on a subdomain instead of a path."
  type        = bool
  default     = false
}

variable "module_folder" {
  description = "The calling module's runtime folder relative to $HOME, following the registry layout .coder-modules/<namespace>/<module>."
  type        = string

  validation {
    condition     = can(regex("^\\.coder-modules/[a-z0-9-]+/[a-z0-9-]+$", var.module_folder))
    error_message = "module_folder must look like .coder-modules/<namespace>/<module>."
  }
}

variable "agentapi_port" {
  description = "The port AgentAPI listens on (validated by the calling module)."
  type        = number
}

variable "enable_state_persistence" {
  description = "Whether the scripts save and restore AgentAPI's chat history."
  type        = bool
}

variable "state_file_path" {
  description = "Absolute path of the AgentAPI state file; empty lets the scripts choose their default in module_folder."
  type        = string
}

variable "pid_file_path" {
  description = "Absolute path of the AgentAPI PID file; empty lets the scripts choose their default in module_folder."
  type        = string
}

variable "install_node" {
  description = "Install a pinned Node.js into module_folder when the workspace has neither Node.js 18.19+ nor Bun to run the scripts."
  type        = bool
}

variable "node_download_url" {
  description = "Base URL of Node.js releases (validated by the calling module)."
  type        = string
}

variable "install_script" {
  description = "The built install script, a classic script (not an ES module) run by Node.js or Bun when the workspace starts, before the start script."
  type        = string
}

variable "start_script" {
  description = "The built start script, a classic script (not an ES module) run by Node.js or Bun when the workspace starts."
  type        = string
}

variable "stop_script" {
  description = "The built stop script, a classic script (not an ES module) run by Node.js or Bun when the workspace stops."
  type        = string
}

variable "start_settings" {
  description = "The calling module's settings for the install and start scripts, as a JSON object. This layer passes it through unread, as the \"agent\" member of their settings."
  type        = string

  validation {
    condition     = can(keys(jsondecode(var.start_settings)))
    error_message = "start_settings must be a JSON object."
  }
}

variable "stop_settings" {
  description = "The calling module's settings for the stop script, as a JSON object. This layer passes it through unread, as the \"agent\" member of the stop script's settings."
  type        = string

  validation {
    condition     = can(keys(jsondecode(var.stop_settings)))
    error_message = "stop_settings must be a JSON object."
  }
}
