"""importer"""
