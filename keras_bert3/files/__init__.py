"""Writing and reading the library's files so that a failure names the file
and the cause, and loses nothing: weights files written so that a full disk
cannot crash the process (`weight_files`), and folders that appear whole or
not at all (`whole_folders`)."""
