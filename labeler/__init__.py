"""The ARLS labelling app (Streamlit) and its command line."""
