"""Teaching: guided demos, notebook export, paper tables and their reproductions."""
