"""Writing the library's files so that a failure names the file and its cause and loses nothing: HDF5 weights
files (`weight_files`) and folders that appear whole or not at all (`whole_folders`)."""
