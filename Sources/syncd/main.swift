print("syncd")
