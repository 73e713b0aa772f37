print("syncctl")
