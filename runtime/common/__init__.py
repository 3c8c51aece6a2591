"""What every kind of simulated object shares in the Blender layer (see ``runtime/__init__``); it
imports the engine and nothing else of the add-on."""
