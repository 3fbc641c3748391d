"""servebook: can I serve this model on this hardware, with which command, how fast?"""
